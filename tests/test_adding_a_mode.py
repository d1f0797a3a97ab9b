"""The README's "Adding a mode" walk-through, followed with a toy mode: `Shout` answers in
capitals. Its engine, its CLI module and its UI entry are all in this file; registered at run
time, the mode gets a `reqstudio shout` command from the command registry (reqstudio/cli.py)
and a chat profile from the UI's mode registry (ui/modes.py), with no other code edited."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from reqstudio.cli import (
    EXIT_OK,
    EXIT_USAGE,
    Command,
    UsageError,
    add_command,
    main,
    register_command,
    run_mode,
)
from tests.cli_support import CLEARED, TEST_KEY
from tests.scripted_server import Reply, ScriptedLLMServer

# --- 1. the engine (agents/shout/engine.py): no Chainlit, the model through reqstudio.calls


async def shout(factory, text: str) -> str:
    from langchain_core.messages import HumanMessage

    from reqstudio.calls import complete

    answer = await complete(
        factory.for_role("chat"), [HumanMessage(text)], policy=factory.policy("chat")
    )
    return str(answer.content).upper()


# --- 2. the CLI module (agents/shout/cli.py): its own options and one call to run_mode


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(subparsers, "shout", "Shout mode: the answer in capitals on stdout.")
    parser.add_argument("text", help="what to say")
    parser.add_argument("--out", type=Path, help="write the answer here")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if not args.text.strip():
        raise UsageError("the text is empty")

    async def work(runtime) -> int:
        answer = await shout(runtime.factory(), args.text)
        if args.out is not None:
            args.out.write_text(answer + "\n", encoding="utf-8")
        else:
            print(answer)
        return EXIT_OK

    return run_mode(work, outputs={"--out": args.out})


# --- 3. the command in the registry (one line in COMMANDS, or at run time as here)


@pytest.fixture
def shout_command(monkeypatch, llm_server: ScriptedLLMServer, tmp_path: Path):
    import reqstudio.cli

    monkeypatch.setattr(reqstudio.cli, "COMMANDS", list(reqstudio.cli.COMMANDS))
    register_command(Command("shout", "answer in capitals", __name__))
    for name in [n for n in os.environ if n.startswith(CLEARED)]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setenv("OPENAI_MODEL", "scripted-model")
    monkeypatch.setenv("REQSTUDIO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def forget_clients_of_closed_loops():
    """`main()` runs here in the test's process and ends its event loop; langchain-openai keeps
    its async HTTP client per provider URL, which would be handed, dead, to the next test."""
    yield
    from langchain_openai.chat_models import _client_utils

    _client_utils._cached_async_httpx_client.cache_clear()


def test_a_registered_mode_gets_a_command_listed_in_the_help(shout_command, capsys):
    with pytest.raises(SystemExit) as exit:
        main(["--help"])
    assert exit.value.code == 0
    assert "answer in capitals" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["shout", "--help"])
    assert "--out" in capsys.readouterr().out


def test_the_command_runs_through_the_harness(shout_command, llm_server, capsys, tmp_path):
    llm_server.script(Reply(content="requirements first"))
    assert main(["shout", "what comes first?"]) == EXIT_OK
    assert capsys.readouterr().out == "REQUIREMENTS FIRST\n"
    assert "what comes first?" in str(llm_server.requests[-1])


def test_the_harness_refuses_bad_input_before_any_model_call(shout_command, llm_server, capsys):
    assert main(["shout", " "]) == EXIT_USAGE
    assert main(["shout", "hi", "--out", "no/such/folder/a.txt"]) == EXIT_USAGE
    assert capsys.readouterr().err.splitlines() == [
        "reqstudio: the text is empty",
        "reqstudio: --out: the folder no/such/folder does not exist",
    ]
    assert llm_server.requests == []


# --- 4. the UI entry (ui/shout.py): a ModeSpec, registered with register_mode


def test_a_registered_mode_gets_a_ui_entry(monkeypatch):
    import ui.modes
    from ui.modes import ModeSpec, StarterSpec, chat_profiles, register_mode

    monkeypatch.setattr(ui.modes, "MODES", dict(ui.modes.MODES))

    async def on_message(message) -> None:  # the mode's session flow
        return None

    register_mode(
        ModeSpec(
            id="Chat",  # the default mode must be there for the selector
            title={"zh": "对话", "en": "Chat"},
            description={"zh": "对话", "en": "Chat"},
            on_message=on_message,
        )
    )
    register_mode(
        ModeSpec(
            id="Shout",
            title={"zh": "大声", "en": "Shout"},
            description={"zh": "用大写字母回答", "en": "Answers in capitals"},
            on_message=on_message,
            starters=[
                StarterSpec(label={"zh": "试试", "en": "Try"}, message={"zh": "你好", "en": "hi"})
            ],
        )
    )
    profiles = {p.name: p for p in chat_profiles("en")}
    assert profiles["Shout"].display_name == "Shout"
    assert profiles["Shout"].markdown_description == "Answers in capitals"
    assert [s.message for s in profiles["Shout"].starters] == ["hi"]
    assert {p.name: p.display_name for p in chat_profiles("zh-CN")}["Shout"] == "大声"
