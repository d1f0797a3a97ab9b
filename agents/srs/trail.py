"""Seed 000's console trail: every `[日志] …` line the reference implementation prints, in
Chinese as the seed writes it and in English, emitted as the run goes.

Nodes call `say(runtime, key, ...)`: the line goes to the `reqstudio.srs` logger (in Chinese,
as the seed) and into the run's event stream as a `Trail` event, which the CLI prints on
stderr in the user's language (`--quiet` silences it) and the browser ignores (it has steps).
"""

from __future__ import annotations

import logging
from typing import Any

from langgraph.runtime import Runtime

log = logging.getLogger("reqstudio.srs")

# key: (the seed's line, the same line in English)
LINES: dict[str, tuple[str, str]] = {
    "parse_start": (
        "[日志] ReqParse：开始解析用户输入",
        "[log] ReqParse: parsing the user input",
    ),
    "parse_done": (
        "[日志] ReqParse：解析完成，共 {count} 条需求",
        "[log] ReqParse: parsed, {count} requirements",
    ),
    "explore_start": (
        "[日志] ReqExplore：第 {round} 轮，根据评分强化挖掘与优化（仅处理未冻结且未移除项）",
        "[log] ReqExplore: round {round}, exploring and refining by score "
        "(unfrozen, non-removed items only)",
    ),
    "explore_done": (
        "[日志] ReqExplore：强化挖掘完成，共 {total} 条；冻结 {frozen} 条；已移除 {removed} 条",
        "[log] ReqExplore: exploration done, {total} items; {frozen} frozen; {removed} removed",
    ),
    "clarify_start": (
        "[日志] ReqClarify：第 {round} 轮，对需求逐条评分（排除冻结项）",
        "[log] ReqClarify: round {round}, scoring each requirement (frozen items excluded)",
    ),
    "clarify_skipped": (
        "[日志] ReqClarify：跳过 {count} 个无法读取的评分项：{items}",
        "[log] ReqClarify: skipped {count} score item(s) that could not be read: {items}",
    ),
    "clarify_removed": (
        "[日志] ReqClarify：标记移除 {now} 项（-2），累计移除 {total} 项",
        "[log] ReqClarify: {now} item(s) marked for removal (-2), {total} removed in all",
    ),
    "clarify_frozen": (
        "[日志] ReqClarify：本轮最高正向分 = {top}，新增冻结 {now} 项；累计冻结 {total} 项",
        "[log] ReqClarify: top score this round = {top}, {now} newly frozen; {total} frozen in all",
    ),
    "clarify_done": (
        "[日志] ReqClarify：评分记录完成（仅未冻结项）",
        "[log] ReqClarify: scores recorded (unfrozen items only)",
    ),
    "doc_stream_start": (
        "====== 实时 Markdown SRS 输出（流式） ======",
        "====== Live Markdown SRS output (streaming) ======",
    ),
    "doc_stream_end": (
        "====== 流式输出结束 ======",
        "====== End of streamed output ======",
    ),
    "doc_done": (
        "[日志] DocGenerate：流式输出完成",
        "[log] DocGenerate: streamed output complete",
    ),
}


def render(key: str, **params: Any) -> tuple[str, str]:
    """The line in Chinese and in English."""
    zh, en = LINES[key]
    return zh.format(**params), en.format(**params)


def say(runtime: Runtime[Any], key: str, **params: Any) -> None:
    zh, en = render(key, **params)
    log.info(zh)
    runtime.stream_writer({"type": "trail", "key": key, "text_zh": zh, "text": en})
