"""Every role's structured answer, in every mode, must carry its answer.

The models come from the one registry (`reqstudio.answers`), after importing every module of
the `reqstudio.modes` and `reqstudio.tools` packages: a new role's answer model, or a new tool's argument model,
is covered here without editing this file. Each is fed what is no answer: `{}`, an unrelated
object, its own fields with wrong types, a bare array and prose. A structured answer fails
validation; through the one call path, over HTTP, it is re-asked as often as the role's
policy says and then fails with `StructuredOutputError`. A tool's arguments are refused
with a message to the model, and the tool does not run."""

from __future__ import annotations

import importlib
import json
import pkgutil
from typing import Any

import pytest
from annotated_types import MinLen
from langchain_core.messages import HumanMessage
from pydantic import BaseModel

import reqstudio
from reqstudio.answers import (
    RegisteredModel,
    UnregisteredAnswerModel,
    answer_model,
    registered,
    registration,
)
from reqstudio.calls import policy_for
from reqstudio.structured import StructuredOutputError, ask_structured, parse_structured
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript

PRODUCT = ("reqstudio.",)


def import_every_mode() -> list[str]:
    """Import every module of the `reqstudio` package but its web layer (a module's import
    registers its models; the web layer's `app` starts the app)."""
    names = []
    for module in pkgutil.walk_packages(reqstudio.__path__, "reqstudio."):
        if module.name.endswith(".__main__") or module.name.startswith("reqstudio.web"):
            continue  # a command's __main__ runs it when imported
        importlib.import_module(module.name)
        names.append(module.name)
    return names


MODULES = import_every_mode()
# Tests register answer models of their own (a test's model is not a role's answer).
ENTRIES = [e for e in registered() if e.model.__module__.startswith(PRODUCT)]
ANSWERS = [e for e in ENTRIES if e.kind == "answer"]
TOOL_ARGUMENTS = [e for e in ENTRIES if e.kind == "tool_arguments"]
ROLES = [(e, role) for e in ANSWERS for role in e.users]

UNRELATED = {"verdict": "fine", "notes": "looks good"}
PROSE = "Looks good to me: nothing to change."
NO_ANSWERS = ("empty object", "unrelated object", "wrong types", "bare array", "prose")


def wrong_types(entry: RegisteredModel) -> dict[str, Any]:
    """The model's own required fields, each with a value of the wrong type."""
    properties = entry.model.model_json_schema().get("properties", {})
    wrong: dict[str, Any] = {}
    for name in entry.required:
        prop = properties[name]
        takes_text = prop.get("type") == "string" or "enum" in prop or "const" in prop
        wrong[name] = {"looks": "good"} if takes_text else "looks good"
    return wrong


def no_answer(entry: RegisteredModel, kind: str) -> Any:
    """The JSON value of one kind of non-answer (prose: the text itself)."""
    return {
        "empty object": {},
        "unrelated object": UNRELATED,
        "wrong types": wrong_types(entry),
        "bare array": [UNRELATED, 3],
        "prose": PROSE,
    }[kind]


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def ids(entry: RegisteredModel) -> str:
    return entry.name


# --- the registry covers every mode ------------------------------------------------------------


def test_every_mode_registers_its_answer_models_and_tool_arguments():
    assert "reqstudio.modes.srs.evaluation" in MODULES and "reqstudio.tools.web_search" in MODULES
    roles = {role for e in ANSWERS for role in e.users}
    # Review, Rewrite (expert; its panel is Review's), the SRS agents and the SRS judge
    assert {"ReviewPanel", "RewriteReview", "RewriteOutline", "RewriteQuestions"} <= roles
    assert {"ReqParse", "ReqExplore", "ReqClarify", "evaluation"} <= roles
    used_by = {tool for e in TOOL_ARGUMENTS for tool in e.users}
    assert {"send_message", "create_role", "spawn_agent", "list_contacts", "web_search"} <= used_by
    for entry in ANSWERS:
        assert entry.required, entry.name  # the registry refuses a model without them


def test_a_model_that_validates_nothing_cannot_be_registered_as_an_answer():
    class Lenient(BaseModel):
        issues: list[str] = []

    with pytest.raises(TypeError, match="required fields"):
        answer_model("RewriteReview")(Lenient)
    assert registration(Lenient) is None


# --- each answer model refuses what is no answer -------------------------------------------


@pytest.mark.parametrize("kind", NO_ANSWERS)
@pytest.mark.parametrize("entry", ANSWERS, ids=ids)
def test_an_answer_model_refuses_what_is_no_answer(entry: RegisteredModel, kind: str):
    with pytest.raises(ValueError) as refused:
        parse_structured(as_text(no_answer(entry, kind)), entry.model)
    assert str(refused.value)  # a reason the re-ask can give the model


def answers_of_lists_that_may_be_empty() -> list[RegisteredModel]:
    """The answer models whose required fields are all lists without a minimum length."""
    chosen = []
    for entry in ANSWERS:
        fields = entry.model.model_fields
        schema = entry.model.model_json_schema()["properties"]
        lists = [n for n in entry.required if schema[n].get("type") == "array"]
        if lists == list(entry.required) and not any(
            isinstance(m, MinLen) for n in lists for m in fields[n].metadata
        ):
            chosen.append(entry)
    return chosen


EMPTY_LIST_ANSWERS = answers_of_lists_that_may_be_empty()


def test_some_answers_may_be_empty_lists():
    assert EMPTY_LIST_ANSWERS  # the next test would otherwise check nothing


@pytest.mark.parametrize("entry", EMPTY_LIST_ANSWERS, ids=ids)
def test_an_empty_list_is_an_answer_when_the_model_sent_it(entry: RegisteredModel):
    lists = list(entry.required)
    value = parse_structured(json.dumps({name: [] for name in lists}), entry.model)
    assert all(getattr(value, n) == [] for n in lists)


# --- through the one call path, over HTTP, within each role's policy -------------------------


@pytest.mark.parametrize("kind", NO_ANSWERS)
@pytest.mark.parametrize(("entry", "role"), ROLES, ids=[f"{e.name}-{r}" for e, r in ROLES])
async def test_each_role_is_asked_again_within_its_policy_then_fails(
    factory, llm_server: ScriptedLLMServer, entry: RegisteredModel, role: str, kind: str
):
    policy = policy_for(entry.policy_name(role), factory.settings)
    text = as_text(no_answer(entry, kind))
    llm_server.script(*[Reply(content=text) for _ in range(policy.attempts + 1)])
    with pytest.raises(StructuredOutputError) as failed:
        await ask_structured(
            factory.for_role(role),
            [HumanMessage("Answer with the JSON your role gives.")],
            entry.model,
            response_format=factory.response_format(entry.model),
            policy=policy,
            label=role,
        )
    assert len(llm_server.requests) == policy.attempts == failed.value.attempts
    assert "could not be used" in str(llm_server.requests[-1]["messages"][-1]["content"])
    assert f"after {policy.attempts} attempts" in str(failed.value)


@pytest.mark.parametrize("kind", NO_ANSWERS)
async def test_the_srs_judge_asks_again_then_gives_the_seeds_error_object_never_a_score(
    factory, llm_server: ScriptedLLMServer, kind: str
):
    from reqstudio.modes.srs.evaluation import NOT_JSON_ERROR, EvaluationAnswer, evaluate_srs
    from tests.test_srs_support import EVALUATE

    entry = registration(EvaluationAnswer)
    assert entry is not None and "evaluation" in entry.users
    policy = policy_for(entry.policy_name("evaluation"), factory.settings)
    text = as_text(no_answer(entry, kind))
    llm_server.script(*[Reply(content=text, match=EVALUATE)] * (policy.attempts + 1))
    result = await evaluate_srs("# Reference\nFR-01 buy.", "# Candidate\nFR-01 buy.", factory)
    assert result["error"] == NOT_JSON_ERROR
    assert result["raw_output"] == text[:500]
    assert not {"metrics", "Comprehensive_Score_Simple", "Comprehensive_Score_Weighted"} & set(
        result
    )
    assert len(llm_server.requests) == policy.attempts


async def test_the_one_call_path_refuses_a_model_that_is_not_a_registered_answer(
    factory, llm_server: ScriptedLLMServer
):
    from reqstudio.modes.team.tools import SendMessageArgs

    class Unregistered(BaseModel):
        issues: list[str]

    for model in (Unregistered, SendMessageArgs):
        with pytest.raises(UnregisteredAnswerModel, match="not a registered answer model"):
            await ask_structured(
                factory.for_role("RewriteReview"),
                [HumanMessage("x")],
                model,
                response_format=None,
                policy=policy_for("RewriteReview", factory.settings),
            )
    assert llm_server.requests == []  # refused before any call


# --- tool arguments: refused with a message to the model, the tool never runs ----------------


def team_tools() -> dict[str, Any]:
    from reqstudio.modes.team.society import AgentSociety
    from reqstudio.modes.team.tools import society_tools

    return {t.name: t for t in society_tools(AgentSociety(), "root")}


def agent_tools(searches: list[str]) -> dict[str, Any]:
    from reqstudio.tools.web_search import WebSearch

    def backend(query: str, max_results: int) -> list[dict[str, str]]:
        searches.append(query)
        return [{"title": "t", "href": "https://example.org", "body": query}]

    return {t.name: t for t in [WebSearch(backend).as_tool()]}


TOOL_CASES = [
    (entry, tool, kind)
    for entry in TOOL_ARGUMENTS
    for tool in entry.users
    for kind in NO_ANSWERS
    # a tool without arguments is called with `{}`, and has no field to get wrong
    if entry.required or kind not in ("empty object", "wrong types")
]


def test_every_tool_of_team_and_agent_takes_registered_arguments():
    for name, tool in {**team_tools(), **agent_tools([])}.items():
        entry = registration(tool.args_schema)
        assert entry is not None and entry.kind == "tool_arguments" and name in entry.users
    covered = {*team_tools(), *agent_tools([])}
    assert {tool for e in TOOL_ARGUMENTS for tool in e.users} <= covered


@pytest.mark.parametrize("kind", NO_ANSWERS)
@pytest.mark.parametrize("entry", TOOL_ARGUMENTS, ids=ids)
def test_a_tool_argument_model_refuses_what_is_no_call(entry: RegisteredModel, kind: str):
    if not entry.required and kind in ("empty object", "wrong types"):
        assert entry.model.model_validate({})  # `{}` is its call
        return
    with pytest.raises(ValueError):  # pydantic's ValidationError is a ValueError
        entry.model.model_validate(no_answer(entry, kind))


TEAM_TASK = "参数检查：请调用工具"


async def refused_by_team(factory, llm_server, tool: str, arguments: str) -> tuple[list, str]:
    from tests import test_team_run as team

    llm_server.script(
        Reply(match=TEAM_TASK, tool_calls=[ToolCallScript(tool, arguments)]),
        team.answer("答复。", TEAM_TASK),
    )
    _, events = await team.run_team(factory, TEAM_TASK)
    second = team.requests_of(llm_server, "root")[1]
    told = [m["content"] for m in second if m["role"] == "tool"]
    assert len(told) == 1
    return events, told[0]


async def refused_by_agent(factory, llm_server, tool: str, arguments: str, searches: list[str]):
    from reqstudio.modes.agent import AgentConfig, ReactAgent, ToolCallFinished

    reasoning = "research agent"  # reqstudio/prompts/agent/react_system.md
    llm_server.script(
        Reply(match=reasoning, tool_calls=[ToolCallScript(tool, arguments)]),
        Reply(match=reasoning, content="Enough."),
        Reply(match="Write the final answer now", content="An answer."),
    )
    config = AgentConfig(language="en", max_execution_time=20.0)
    agent = ReactAgent(factory, list(agent_tools(searches).values()), config)
    events = [e async for e in agent.run("Which standard replaced IEEE 830?")]
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    second = [r for r in llm_server.requests if reasoning in json.dumps(r["messages"])][1]
    told = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    return finished, told


@pytest.mark.parametrize(
    ("entry", "tool", "kind"), TOOL_CASES, ids=[f"{t}-{k}" for _, t, k in TOOL_CASES]
)
async def test_a_tool_call_with_no_arguments_of_its_own_is_refused_and_not_run(
    factory, llm_server: ScriptedLLMServer, entry: RegisteredModel, tool: str, kind: str
):
    from reqstudio.modes.team.events import AgentSpawned, MessageDelivered, Refused, RoleCreated

    arguments = as_text(no_answer(entry, kind))
    if tool in team_tools():
        events, told = await refused_by_team(factory, llm_server, tool, arguments)
        (refusal,) = [e for e in events if isinstance(e, Refused)]
        assert refusal.tool == tool
        assert refusal.code in ("invalid_arguments", "malformed_tool_call")
        assert refusal.code in told and "not valid" in told and "again" in told
        # nothing happened: no role, no agent, no message but the task and the answer
        assert not [e for e in events if isinstance(e, RoleCreated)]
        assert not [e for e in events if isinstance(e, AgentSpawned) and e.parent]
        delivered = [e.message["content"] for e in events if isinstance(e, MessageDelivered)]
        assert delivered == [TEAM_TASK, "答复。"]
    else:
        searches: list[str] = []
        finished, told = await refused_by_agent(factory, llm_server, tool, arguments, searches)
        assert finished.tool == tool and not finished.ok
        assert "not valid" in finished.result_text and tool in finished.result_text
        assert told == [finished.result_text]  # what the model reads next
        assert searches == []  # the search never ran


async def test_a_tool_without_arguments_runs_when_called_with_an_empty_object(
    factory, llm_server: ScriptedLLMServer
):
    from reqstudio.modes.team.events import Refused

    events, told = await refused_by_team(factory, llm_server, "list_contacts", "{}")
    assert not [e for e in events if isinstance(e, Refused)]
    assert [c["agent_id"] for c in json.loads(told)] == ["user"]


@pytest.mark.parametrize("content", ["", "   "])
async def test_a_team_answer_without_content_is_refused_not_delivered_as_the_answer(
    factory, llm_server: ScriptedLLMServer, content: str
):
    from reqstudio.modes.team.events import Refused, RunFinished
    from tests import test_team_run as team

    task = "空答复检查"
    llm_server.script(
        Reply(match=task, tool_calls=[team.send("user", "status_report", content, {"status": "done"})]),
        team.answer("真正的答复。", task),
    )  # fmt: skip
    _, events = await team.run_team(factory, task)
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.answers == ["真正的答复。"]
    (refusal,) = [e for e in events if isinstance(e, Refused)]
    assert refusal.tool == "send_message" and refusal.code == "invalid_arguments"
    told = [m["content"] for m in team.requests_of(llm_server, "root")[1] if m["role"] == "tool"]
    assert "content" in told[0] and "again" in told[0]
