"""The Rewrite page's code block (docs/rewrite.md) runs as written (seed-style construction, `RewriteChain()`
from the settings), in a process of its own, against the scripted server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.rewrite_support import (
    FILL_ZH,
    OUTLINE_ZH,
    REVIEW_ZH,
    fill_replies,
    outline_reply,
    review_reply,
)

ROOT = Path(__file__).resolve().parent.parent


def rewrite_code_block() -> str:
    section = (ROOT / "docs" / "rewrite.md").read_text(encoding="utf-8")
    [block] = [
        b for b in re.findall(r"```python\n(.*?)```", section, re.S) if "RewriteChain()" in b
    ]
    return block


def test_the_readme_example_runs_with_seed_style_construction(llm_server, tmp_path):
    llm_server.script(
        outline_reply(
            [("概述", "说明系统用途。", 2), ("支付", "说明支付规则。", 2)],
            title="宠物医院预约系统",
            match=OUTLINE_ZH,
        ),
        *fill_replies(["系统供宠物主人在线预约。\n", "仅到店刷卡。\n"], match=FILL_ZH),
        review_reply(match=REVIEW_ZH),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.update(
        OPENAI_BASE_URL=llm_server.base_url,
        OPENAI_API_KEY="sk-test-not-a-real-key",
        OPENAI_MODEL="scripted-model",
        REQSTUDIO_DATA_DIR=str(tmp_path / "data"),
        PYTHONIOENCODING="utf-8",
        PYTHONPATH=str(ROOT),
    )
    done = subprocess.run(
        [sys.executable, "-c", rewrite_code_block()],
        cwd=tmp_path, env=env, capture_output=True, text=True, encoding="utf-8", timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == (
        "# 宠物医院预约系统\n\n## 概述\n\n系统供宠物主人在线预约。\n\n## 支付\n\n仅到店刷卡。\n\n\nsec-01\n"
    )
    assert "INFO: 阶段开始：outline_generation..." in done.stderr
    assert "仅到店刷卡，不支持在线支付。" in str(llm_server.requests[0]["messages"])
