"""A thread's own model and temperature: picked in the settings panel
among the configured models, sent to the provider by every call of that thread and no other,
kept when the thread is reopened, and refused when the browser sends anything else.

The real app over its real Socket.IO endpoint; the scripted provider records each body."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from reqstudio.llm import Endpoint, ModelFactory, ThreadModel, model_choices
from reqstudio.settings import ModelSpec, load_settings
from tests.apps import AppProcess, running_app
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket, sign_in_cookie

CHOICES = "bigger-model,cheaper-model"
AGENT_KEY = "sk-agent-key-never-in-a-browser"
AGENT_MODEL = (
    '{"provider": "openai", "model": "agent-answer-model", '
    f'"base_url": "http://127.0.0.1:9/v1", "api_key": "{AGENT_KEY}"}}'
)


def settings_event(events: list) -> list[dict]:
    """The widgets of the last settings panel the app sent."""
    return [data for name, data in events if name == "chat_settings"][-1]


def widget(panel: list[dict], setting_id: str) -> dict:
    return next(w for w in panel if w["id"] == setting_id)


def bodies_since(server: ScriptedLLMServer, start: int) -> list[dict]:
    return server.requests[start:]


# --- the factory: one factory, a thread's override ---------------------------------------


def test_choices_are_the_configured_models_and_only_names(tmp_path: Path):
    settings = load_settings(
        openai_base_url="http://127.0.0.1:9/v1",
        openai_api_key="sk-main",
        openai_model="main-model",
        openai_evaluation_model="judge-model",
        REQSTUDIO_MODEL_CHOICES="bigger-model, main-model,bigger-model",
        AGENT_ANSWER_MODEL=AGENT_MODEL,
        REQSTUDIO_DATA_DIR=str(tmp_path),
    )
    endpoint = Endpoint("http://127.0.0.1:9/v1", "sk-main", "main-model")
    choices = model_choices(settings, endpoint)
    assert list(choices) == ["main-model", "judge-model", "bigger-model", "agent-answer-model"]
    # the Agent model keeps its own URL and key (on the server); the others use the provider's
    assert choices["agent-answer-model"].api_key.get_secret_value() == AGENT_KEY
    assert choices["bigger-model"] == ModelSpec(model="bigger-model")
    # the offline model is the only one when it answers: nothing to pick
    assert model_choices(settings, Endpoint("http://x", "k", "smollm2", embedded=True)) == {}


async def test_a_thread_override_reaches_the_wire_for_every_role(llm_server: ScriptedLLMServer):
    settings = load_settings(openai_base_url=llm_server.base_url, openai_api_key="sk-test")
    endpoint = Endpoint(llm_server.base_url, "sk-test", "scripted-model")
    chosen = ModelFactory(settings, endpoint, ThreadModel(ModelSpec(model="bigger-model"), 1.3))
    plain = ModelFactory(settings, endpoint)
    llm_server.script(*[Reply(content="ok") for _ in range(4)])
    for role in ("chat", "DocGenerate"):
        await chosen.for_role(role).ainvoke([HumanMessage("hi")])
        await plain.for_role(role).ainvoke([HumanMessage("hi")])
    sent = [(r["model"], r["temperature"]) for r in llm_server.requests]
    assert sent == [
        ("bigger-model", 1.3),
        ("scripted-model", 0.7),  # Chat's configured temperature
        ("bigger-model", 1.3),
        ("scripted-model", 0.1),  # DocGenerate's
    ]
    assert chosen.model_name("evaluation") == "bigger-model"
    # a caller that names its temperature keeps it; only the model is the thread's
    assert chosen.for_role("chat", temperature=0.0).temperature == 0.0


# --- the app: the panel, the wire, reopening, refusals -----------------------------------


async def wait_for_panel(chat: ChatSocket, after: int) -> list[dict]:
    await chat.wait_for(lambda name, _: name == "chat_settings" and len(chat.events) > after)
    return settings_event(chat.events[after:])


async def answered(chat: ChatSocket, text: str) -> None:
    await chat.send(text)
    await chat.wait_until_idle()


@pytest.fixture
def app_with_choices(llm_server: ScriptedLLMServer, tmp_path: Path):
    env = provider_env(llm_server) | {
        "REQSTUDIO_MODEL_CHOICES": CHOICES,
        "AGENT_ANSWER_MODEL": AGENT_MODEL,
    }
    with running_app(tmp_path / "data", env) as app:
        yield app


async def test_the_chosen_model_and_temperature_are_the_threads_own(
    app_with_choices: AppProcess, llm_server: ScriptedLLMServer
):
    app = app_with_choices
    cookie = sign_in_cookie(app.url)
    llm_server.script(*[Reply(content=f"答复 {n}") for n in range(6)])

    chosen = await ChatSocket(app.url, cookie).connect()
    panel = await wait_for_panel(chosen, 0)
    offered = [item["value"] for item in widget(panel, "thread_model")["items"]]
    assert offered == ["default", "scripted-model", "bigger-model", "cheaper-model",
                       "agent-answer-model"]  # fmt: skip
    assert AGENT_KEY not in chosen.received_text() and "127.0.0.1:9" not in chosen.received_text()
    await chosen.client.call(
        "chat_settings_change",
        {"thread_model": "bigger-model", "thread_temperature_on": True, "thread_temperature": 1.3},
    )
    start = len(llm_server.requests)
    await answered(chosen, "第一个问题")

    other = await ChatSocket(app.url, cookie).connect()  # another thread, untouched
    await wait_for_panel(other, 0)
    middle = len(llm_server.requests)
    await answered(other, "另一个对话的问题")

    sent = [(b["model"], b["temperature"]) for b in bodies_since(llm_server, start)]
    assert sent[: middle - start] == [("bigger-model", 1.3)]
    assert sent[middle - start :] == [("scripted-model", 0.7)]

    # The browser sends a model nobody configured, a provider URL and a key: refused, said so,
    # and the thread keeps its model.
    seen = len(chosen.events)
    await chosen.client.call(
        "chat_settings_change",
        {"thread_model": "gpt-4-from-the-browser", "base_url": "http://evil.example/v1",
         "api_key": "sk-typed-in-the-browser", "thread_temperature": 7},
    )  # fmt: skip
    refusal = await chosen.wait_for(
        lambda name, data: name == "new_message" and "⚠️" in str(data.get("output"))
    )
    assert "本对话的模型" in refusal["output"] or "Model of this thread" in refusal["output"]
    panel = await wait_for_panel(chosen, seen)
    assert widget(panel, "thread_model")["initial"] == "bigger-model"
    assert widget(panel, "thread_temperature")["initial"] == 1.3
    start = len(llm_server.requests)
    await answered(chosen, "第二个问题")
    assert [(b["model"], b["temperature"]) for b in bodies_since(llm_server, start)] == [
        ("bigger-model", 1.3)
    ]
    thread_id = chosen.thread_id
    await chosen.close()
    await other.close()
    with sqlite3.connect(app.data_dir / "history.db") as db:
        (stored,) = db.execute(
            'SELECT "metadata" FROM threads WHERE "id" = ?', (thread_id,)
        ).fetchone()
    assert json.loads(stored)["chat_settings"]["thread_model"] == "bigger-model"
    assert "evil.example" not in stored and "sk-typed-in-the-browser" not in stored

    # Reopened after a restart: the panel shows the choice, and the calls use it.
    app.stop()
    app.start()
    reopened = await ChatSocket(app.url, sign_in_cookie(app.url), thread_id=thread_id).connect()
    panel = await wait_for_panel(reopened, 0)
    assert widget(panel, "thread_model")["initial"] == "bigger-model"
    assert widget(panel, "thread_temperature_on")["initial"] is True
    start = len(llm_server.requests)
    await answered(reopened, "重新打开后的问题")
    assert [(b["model"], b["temperature"]) for b in bodies_since(llm_server, start)] == [
        ("bigger-model", 1.3)
    ]
    await reopened.close()


REASONING = "research agent"  # reqstudio/prompts/agent/react_system.md
ANSWER = "Write the final answer now"  # reqstudio/prompts/agent/answer_context.md


async def test_agent_runs_use_the_threads_model_unless_a_role_is_picked(
    app_with_choices: AppProcess, llm_server: ScriptedLLMServer
):
    app = app_with_choices
    agent = await ChatSocket(app.url, sign_in_cookie(app.url), profile="Agent").connect()
    panel = await wait_for_panel(agent, 0)
    assert [w["id"] for w in panel] == ["thread_model", "thread_temperature_on",
        "thread_temperature", "thread_project", "agent_fc_model", "agent_answer_model"]  # fmt: skip
    assert all(w["type"] != "textinput" for w in panel)  # no name, URL or key to type
    await agent.wait_for(lambda name, data: name == "new_message" and "`web_search`" in str(data))
    await agent.client.call(
        "chat_settings_change",
        {"thread_model": "bigger-model", "thread_temperature_on": True, "thread_temperature": 0.4},
    )
    llm_server.script(
        Reply(match=REASONING, content="不需要工具。"),
        Reply(match=ANSWER, content="答案一。"),
    )
    start = len(llm_server.requests)
    await answered(agent, "需求是什么？")
    # the configured answer model (another URL) gives way to the thread's choice
    assert [(b["model"], b["temperature"]) for b in bodies_since(llm_server, start)] == [
        ("bigger-model", 0.4),
        ("bigger-model", 0.4),
    ]
    # a role picked in the panel is that role's model; the other keeps the thread's
    await agent.client.call("chat_settings_change", {"agent_answer_model": "cheaper-model"})
    llm_server.script(
        Reply(match=REASONING, content="不需要工具。"),
        Reply(match=ANSWER, content="答案二。"),
    )
    start = len(llm_server.requests)
    await answered(agent, "再问一次")
    assert [b["model"] for b in bodies_since(llm_server, start)] == [
        "bigger-model",
        "cheaper-model",
    ]
    await agent.close()
