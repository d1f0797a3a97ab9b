"""CONTRIBUTING.md's "Adding a mode" walk-through, followed with a toy mode: `Shout` answers in
capitals. Its engine, its command and its model role (a temperature variable of its own, its
own retry policy) live in its own package, `tests/shout_mode/`; its UI entry is in this file.
One line in the mode registry (reqstudio/commands.py, here at run time) gives it a `reqstudio
shout` command, its role and its role's setting; `register_mode` gives it a chat profile in the
UI's mode registry (reqstudio/web/modes.py). No other code is edited."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reqstudio import model_roles
from reqstudio.cli import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Command, main, register_command
from reqstudio.settings import Settings, load_settings
from tests.cli_support import CLEARED, TEST_KEY
from tests.scripted_server import Reply, ScriptedLLMServer

# --- 1. the engine (tests/shout_mode/engine.py): no Chainlit, its own role through reqstudio.calls
# --- 2. the command (tests/shout_mode/cli.py): its own options and one call to run_mode
# --- 3. the role (tests/shout_mode/roles.py): SHOUT_TEMPERATURE (default 1.1), two tries

SHOUT = Command("shout", "answer in capitals", "tests.shout_mode.cli")


# --- 4. the command in the registry (one line in COMMANDS, or at run time as here)


@pytest.fixture
def shout_command(monkeypatch, llm_server: ScriptedLLMServer, tmp_path: Path):
    import reqstudio.commands

    monkeypatch.setattr(reqstudio.commands, "COMMANDS", list(reqstudio.commands.COMMANDS))
    register_command(SHOUT)
    for name in [n for n in os.environ if n.startswith((*CLEARED, "SHOUT_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setenv("OPENAI_MODEL", "scripted-model")
    monkeypatch.setenv("REQSTUDIO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REQSTUDIO_RETRY_BACKOFF_SCALE", "0")
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


def test_the_command_runs_through_the_harness_as_its_own_role(
    shout_command, llm_server, capsys, tmp_path
):
    llm_server.script(Reply(content="requirements first"))
    assert main(["shout", "what comes first?"]) == EXIT_OK
    assert capsys.readouterr().out == "REQUIREMENTS FIRST\n"
    [request] = llm_server.requests
    assert "what comes first?" in str(request)
    assert request["temperature"] == 1.1  # the role's declared default, not Chat's 0.7


def test_the_roles_own_variable_sets_its_temperature(shout_command, llm_server, monkeypatch):
    monkeypatch.setenv("SHOUT_TEMPERATURE", "0.4")
    monkeypatch.setenv("OPENAI_TEMP_CHAT", "1.9")
    llm_server.script(Reply(content="ok"))
    assert main(["shout", "hi"]) == EXIT_OK
    assert llm_server.requests[-1]["temperature"] == 0.4


def test_a_bad_value_of_the_roles_variable_is_refused_in_one_line(
    shout_command, llm_server, monkeypatch, capsys
):
    monkeypatch.setenv("SHOUT_TEMPERATURE", "3")
    assert main(["shout", "hi"]) == EXIT_USAGE
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("reqstudio: ") and "SHOUT_TEMPERATURE" in line
    assert llm_server.requests == []


def test_the_roles_own_retry_policy_counts_the_tries(shout_command, llm_server, capsys):
    llm_server.script(Reply(fault="500"), Reply(fault="500"), Reply(content="never asked"))
    assert main(["shout", "hi"]) == EXIT_FAILED
    assert len(llm_server.requests) == 2  # RetryPolicy(2): Chat's three would ask once more


def test_the_role_and_its_variable_come_only_with_the_registry_line(monkeypatch):
    assert "shout_temperature" not in Settings.model_fields
    with pytest.raises(model_roles.UnknownRole, match="'shout'"):
        load_settings().temperature_for("shout")
    import reqstudio.commands

    monkeypatch.setattr(reqstudio.commands, "COMMANDS", list(reqstudio.commands.COMMANDS))
    register_command(SHOUT)
    monkeypatch.setenv("SHOUT_TEMPERATURE", "0.25")
    assert load_settings().temperature_for("shout") == 0.25
    assert model_roles.role("shout").offline_max_tokens == 64


def test_the_harness_refuses_bad_input_before_any_model_call(shout_command, llm_server, capsys):
    assert main(["shout", " "]) == EXIT_USAGE
    assert main(["shout", "hi", "--out", "no/such/folder/a.txt"]) == EXIT_USAGE
    assert capsys.readouterr().err.splitlines() == [
        "reqstudio: the text is empty",
        "reqstudio: --out: the folder no/such/folder does not exist",
    ]
    assert llm_server.requests == []


# --- 4. the UI entry (reqstudio/web/shout.py): a ModeSpec, registered with register_mode


def test_a_registered_mode_gets_a_ui_entry(monkeypatch):
    import reqstudio.web.modes
    from reqstudio.web.modes import ModeSpec, StarterSpec, chat_profiles, register_mode

    monkeypatch.setattr(reqstudio.web.modes, "MODES", dict(reqstudio.web.modes.MODES))

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
