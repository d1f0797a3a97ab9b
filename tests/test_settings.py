"""Settings: the seeds' variables, defaults and ranges; one clear line for a bad value."""

from __future__ import annotations

import pytest

from reqstudio.settings import SettingsError, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "REQSTUDIO_USERS",
                 "AGENT_MAX_ITERATIONS", "AGENT_MAX_EXECUTION_TIME", "AGENT_FUNCTION_CALL_MODEL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_defaults_follow_the_seeds():
    s = load_settings()
    assert s.openai_model == "gpt-4o-mini"
    assert (s.temp_reqparse, s.temp_reqexplore, s.temp_reqclarify, s.temp_docgenerate) == (
        0.2,
        0.6,
        0.2,
        0.1,
    )
    assert (s.agent_max_iterations, s.agent_max_execution_time, s.agent_verbose) == (5, 60, False)
    assert s.uses_embedded_model  # no key and no base URL: the offline model answers


def test_environment_values_are_read(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1/")
    monkeypatch.setenv("OPENAI_MODEL", "qwen2.5:7b")
    monkeypatch.setenv("OPENAI_TEMP_REQEXPLORE", "0.9")
    monkeypatch.setenv("AGENT_FUNCTION_CALL_MODEL", '{"model": "deepseek-chat", "temperature": 0}')
    s = load_settings()
    assert s.openai_base_url == "http://localhost:11434/v1"
    assert s.temperature_for("ReqExplore") == 0.9
    assert s.agent_function_call_model.model == "deepseek-chat"
    assert not s.uses_embedded_model


def test_dotenv_file_is_read(tmp_path):
    (tmp_path / ".env").write_text("OPENAI_MODEL=deepseek-chat\nAGENT_MAX_ITERATIONS=3\n")
    s = load_settings()
    assert (s.openai_model, s.agent_max_iterations) == ("deepseek-chat", 3)


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("AGENT_MAX_ITERATIONS", "42", 'AGENT_MAX_ITERATIONS="42"'),
        ("AGENT_MAX_ITERATIONS", "0", "greater than or equal to 1"),
        ("AGENT_MAX_EXECUTION_TIME", "5", 'AGENT_MAX_EXECUTION_TIME="5"'),
        ("AGENT_MAX_EXECUTION_TIME", "301", "less than or equal to 300"),
        ("OPENAI_TEMP_REQPARSE", "hot", "OPENAI_TEMP_REQPARSE"),
        ("OPENAI_BASE_URL", "localhost:8000", "must start with http"),
        ("AGENT_FUNCTION_CALL_MODEL", "{not json", "AGENT_FUNCTION_CALL_MODEL"),
        ("REQSTUDIO_USERS", "alice", "name:password"),
    ],
)
def test_bad_value_is_one_line_naming_variable_value_and_rule(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, expected: str
):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as error:
        load_settings()
    message = str(error.value)
    assert "\n" not in message
    assert name in message
    assert expected in message


def test_secrets_never_appear_in_error_messages(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("REQSTUDIO_USERS", "alice-secret-password")
    with pytest.raises(SettingsError) as error:
        load_settings()
    assert "alice-secret-password" not in str(error.value)
    monkeypatch.setenv("REQSTUDIO_USERS", "alice:pw1,bob:pw2")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-abcdef")
    s = load_settings()
    assert s.user_passwords == {"alice": "pw1", "bob": "pw2"}
    assert "sk-live-abcdef" not in repr(s)


def test_chainlit_ci_placeholder_key_is_not_a_provider(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-FAKE-OPENAI-API-KEY")
    assert load_settings().uses_embedded_model


def test_offline_model_leaves_one_core_to_the_app_and_the_browser(
    monkeypatch: pytest.MonkeyPatch,
):
    # llama.cpp's threads wait on each other: on two cores with one busy, two threads gave
    # 3-13 tokens a second where one thread gave 40 (README, "The offline model").
    monkeypatch.delenv("REQSTUDIO_LOCAL_MODEL_THREADS", raising=False)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert load_settings().local_model_threads == 1
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert load_settings().local_model_threads == 7
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0}, raising=False)
    assert load_settings().local_model_threads == 1
    monkeypatch.setenv("REQSTUDIO_LOCAL_MODEL_THREADS", "2")
    assert load_settings().local_model_threads == 2
