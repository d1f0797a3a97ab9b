"""Agent mode against the bundled real offline model (SmolLM2-135M through llama.cpp).

A 135M model rarely picks tools by itself; the point is that the whole path works with a real
model server: the loop runs, the answer streams, usage is counted."""

from __future__ import annotations

import asyncio

import pytest

from reqstudio.llm import EMBEDDED_MODEL_NAME
from reqstudio.modes.agent import AgentConfig, AnswerFinished, AnswerToken, ReactAgent, Stats
from reqstudio.runtime import AppRuntime
from reqstudio.settings import ModelSpec, load_settings
from reqstudio.tools.web_search import WebSearch
from tests.cli_support import require_offline_model

pytestmark = pytest.mark.smoke


def test_agent_answers_with_the_bundled_model(monkeypatch, tmp_path):
    require_offline_model()
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
        "AGENT_FUNCTION_CALL_MODEL",
        "AGENT_ANSWER_MODEL",
    ):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings(REQSTUDIO_DATA_DIR=str(tmp_path / "data"))
    assert settings.uses_embedded_model

    def offline_backend(query, max_results):
        return [{"title": "Requirements", "href": "https://example.org/r", "body": "A need."}]

    with AppRuntime(settings) as runtime:
        bounded = ModelSpec(model=EMBEDDED_MODEL_NAME, params={"max_tokens": 160})
        config = AgentConfig(
            max_iterations=2, max_execution_time=120, function_call_spec=bounded, language="en"
        )
        agent = ReactAgent(runtime.factory(), [WebSearch(offline_backend).as_tool()], config)

        async def ask():
            return [e async for e in agent.run("What is a software requirement? One sentence.")]

        events = asyncio.run(ask())

    answer = [e for e in events if isinstance(e, AnswerFinished)]
    assert answer and answer[0].text.strip(), events[-3:]
    assert any(isinstance(e, AnswerToken) for e in events)
    stats = events[-1]
    assert isinstance(stats, Stats)
    assert stats.per_model["function_call"].model == EMBEDDED_MODEL_NAME
    assert stats.per_model["function_call"].calls >= 1
    assert stats.per_model["answer"].calls == 1
    # (Token counts are not checked: llama.cpp's server sends no usage when streaming.)
