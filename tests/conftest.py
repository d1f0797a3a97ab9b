"""Shared fixtures: a scripted OpenAI-compatible server over real HTTP, and settings and a
model factory pointed at it. No test reaches the internet or a paid provider."""

from __future__ import annotations

import signal
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reqstudio.llm import Endpoint, ModelFactory
from reqstudio.settings import Settings, load_settings
from tests.apps import RUNNING
from tests.scripted_server import ScriptedLLMServer

ROOT = Path(__file__).resolve().parent.parent
TEST_OUTPUT = ROOT / "test-output"
DATA = Path(__file__).resolve().parent / "data"


_LAST_TEST: list[str] = [""]


@pytest.fixture(autouse=True)
def ctrl_c_as_from_a_terminal(request: pytest.FixtureRequest) -> Iterator[None]:
    """Each test starts with Ctrl-C as a terminal gives it: SIGINT handled (Python's default
    handler) and not blocked. The commands and apps the tests start inherit both, and their
    Ctrl-C tests send it. A run started in the background by a shell without job control
    ignores SIGINT in every process below it, and a test or library run in this process can
    leave it changed; either way the tests' commands ran on after Ctrl-C (seen in a full
    run: a rewrite meant to stop ran to its end). Restored here, and said as a warning
    naming the test before it."""
    handler = signal.getsignal(signal.SIGINT)
    blocked = signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    if handler is not signal.default_int_handler or blocked:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        warnings.warn(
            f"SIGINT was {'blocked' if blocked else handler!r} after "
            f"{_LAST_TEST[0] or 'the start of the run'}: restored to the default handler",
            stacklevel=1,
        )
    _LAST_TEST[0] = request.node.nodeid
    yield


@pytest.fixture(scope="session")
def llm_server_session() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture
def llm_server(llm_server_session: ScriptedLLMServer) -> Iterator[ScriptedLLMServer]:
    """The scripted server, emptied before and after each test."""
    llm_server_session.reset()
    yield llm_server_session
    llm_server_session.reset()


@pytest.fixture
def settings(llm_server: ScriptedLLMServer, tmp_path: Path) -> Settings:
    return load_settings(
        OPENAI_BASE_URL=llm_server.base_url,
        OPENAI_API_KEY="sk-test-not-a-real-key",
        OPENAI_MODEL="scripted-model",
        REQSTUDIO_DATA_DIR=str(tmp_path / "data"),
        OPENAI_TIMEOUT=10,
        REQSTUDIO_RETRY_BACKOFF_SCALE=0.01,  # the seed's tries, with waits of milliseconds
    )


@pytest.fixture
def factory(settings: Settings, llm_server: ScriptedLLMServer) -> ModelFactory:
    return ModelFactory(
        settings, Endpoint(llm_server.base_url, "sk-test-not-a-real-key", "scripted-model")
    )


@pytest.fixture(scope="session")
def output_dir() -> Path:
    TEST_OUTPUT.mkdir(exist_ok=True)
    return TEST_OUTPUT


pytest_plugins = ["tests.browser_support", "tests.postgres_support", "tests.skip_policy"]


@pytest.fixture
def language() -> Iterator[Callable[[str], None]]:
    """Sets the browser language of a Chainlit context for the test's code (async tests:
    a Chainlit context needs a running loop)."""
    from chainlit.context import ChainlitContext, context_var
    from chainlit.emitter import BaseChainlitEmitter
    from chainlit.session import HTTPSession

    def use(code: str) -> None:
        session = HTTPSession(id="language-test", client_type="webapp", thread_id="t-1")
        session.language = code
        context_var.set(ChainlitContext(session, BaseChainlitEmitter(session)))

    yield use


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    """A failing test's report ends with the last lines of every app it had running."""
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        for app in RUNNING:
            report.sections.append((f"app log ({app.url}), last lines", app.log_tail()))
