"""Smoke: Agent mode in the browser with the bundled offline model (SmolLM2-135M under
llama.cpp), as a new user tries it: the time starter. The model names its tool, or none, in a
forced call (reqstudio/modes/agent/picking.py); whatever it chooses, the run ends within its limit and
says truly what it did: the choice in the thinking step, calls counted (a call the time limit
cut off included), tokens "unknown" (llama.cpp sends no usage when streaming), never 0."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.apps import AppProcess
from tests.browser_support import bring_into_view, open_page, send, switch_mode, wait_until_idle
from tests.cli_support import require_offline_model

pytestmark = [pytest.mark.smoke, pytest.mark.browser]


@pytest.mark.parametrize(
    ("locale", "mode", "question", "round_1", "chose", "stats"),
    [
        ("en-US", "Agent", "What time is it now in UTC?", "Reasoning · round 1",
         r"Chose (the tool \S+|no tool)\.", "Statistics"),
        ("zh-CN", "Agent 智能体", "现在 UTC 时间是几点？", "思考 · 第 1 轮",
         r"选择(调用工具 \S+|不调用工具)。", "统计"),
    ],
)  # fmt: skip
def test_the_agent_with_the_offline_model_ends_honestly(
    browser: Browser,
    tmp_path: Path,
    output_dir: Path,
    locale,
    mode,
    question,
    round_1,
    chose,
    stats,
):
    require_offline_model()
    app = AppProcess(tmp_path / "data").start()
    try:
        page = open_page(browser, app.url, locale)
        switch_mode(page, mode)
        send(page, question)
        # the run's numbers close every ending (an answer, the time limit, a failure)
        table = page.get_by_text(stats, exact=True)
        expect(table).to_be_visible(timeout=120_000)
        wait_until_idle(page)
        page.get_by_text(round_1, exact=False).first.click()  # the folded step opens
        expect(page.get_by_text(re.compile(chose)).first).to_be_visible()
        cells = page.get_by_role("cell")
        expect(page.get_by_role("cell", name=re.compile(r"^(unknown|未知)$")).first).to_be_visible()
        calls = [c for c in cells.all_inner_texts() if re.match(r"^\d+", c.strip())]
        assert calls and int(re.match(r"\d+", calls[0].strip()).group()) >= 1, calls
        expect(page.get_by_role("cell", name="0", exact=True)).to_have_count(0)
        bring_into_view(table)
        page.screenshot(path=output_dir / f"agent-offline-{locale}.png", full_page=True)
    finally:
        app.stop()
