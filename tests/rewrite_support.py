"""Shared helpers for the Rewrite tests (no tests here): scripted answers for each stage and a
progress handler that records every call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.scripted_server import Reply

# Text that occurs only in one prompt (English / Chinese): routes a scripted answer to it.
OUTLINE = "senior solution architect"
FILL = "section by section from an agreed outline"
REVIEW = "meticulous document reviewer"
PATCH = "Rewrite only this section's body"
QUESTIONS = "senior requirements analyst"
PLACE = "Place each one: give the id of the section"
OUTLINE_ZH = "解决方案架构师"
FILL_ZH = "按照既定大纲逐节撰写"
REVIEW_ZH = "文档评审专家"
PATCH_ZH = "请只重写这一节的正文"
QUESTIONS_ZH = "需求分析师"

ORIGINAL_EN = """# Pet Clinic Booking

Owners book visits online. Vets see their day. Reminders are sent.
Payment: maybe online, to be decided.
"""
ORIGINAL_ZH = """# 宠物医院预约

主人在线预约就诊，兽医查看当天的日程，系统发送提醒。
支付方式：可能在线支付，待定。
"""
CLARIFICATIONS = [
    {"question": "How do owners pay?", "answer": "By card at the clinic only; no online payment."},
    {"question": "When are reminders sent?", "answer": "By SMS, 24 hours before the visit."},
]

SECTIONS = [
    ("Overview", "Say what the system is for and who uses it.", 2),
    ("Booking", "Describe how owners book, change and cancel visits.", 2),
    ("Payment and reminders", "State the payment rule and the reminder rule.", 2),
]
BODIES = [
    "The system lets pet owners book clinic visits; vets see their schedule.\n",
    "Owners pick a vet and a free slot; they can change or cancel up to 2 hours before.\n",
    "Owners pay by card at the clinic. An SMS reminder goes out 24 hours before.\n",
]

# The Chinese pet clinic document as the browser tests rewrite it: its title, outline (title,
# goal, level) and section bodies.
_OUTLINE_ZH = json.loads(
    (Path(__file__).resolve().parent / "data" / "rewrite" / "outline-zh.json").read_text("utf-8")
)
TITLE_ZH = _OUTLINE_ZH["title"]
SECTIONS_ZH = [tuple(section) for section in _OUTLINE_ZH["sections"]]
BODIES_ZH = _OUTLINE_ZH["bodies"]


def fenced(value: Any) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False) + "\n```"


def outline_reply(
    sections=SECTIONS, title: str = "Pet Clinic Booking System", match: str = OUTLINE, **kw: Any
) -> Reply:
    plan = {
        "title": title,
        "sections": [{"title": t, "goal": g, "level": lv} for t, g, lv in sections],
    }
    return Reply(content=fenced(plan), match=match, **kw)


def fill_replies(bodies=BODIES, match: str = FILL, **kw: Any) -> list[Reply]:
    return [Reply(content=body, match=match, **kw) for body in bodies]


def review_reply(*issues: tuple[str, str], match: str = REVIEW, kind: str = "omission") -> Reply:
    found = [
        {"section_id": sid, "kind": kind, "description": text, "suggestion": "fix it"}
        for sid, text in issues
    ]
    return Reply(content=fenced({"issues": found}), match=match)


def placement_reply(*placements: tuple[int, str], match: str = PLACE) -> Reply:
    found = [{"issue": number, "section_id": sid} for number, sid in placements]
    return Reply(content=fenced({"placements": found}), match=match)


def patch_reply(body: str, match: str = PATCH, **kw: Any) -> Reply:
    return Reply(content=body, match=match, **kw)


def prompts_for(server, marker: str) -> list[str]:
    """The user prompt of every request whose messages contain `marker`, in arrival order."""
    return server.texts_with(marker)


class RecordingHandler:
    """Records every progress call as (method, stage, message, kwargs)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str, dict[str, Any]]] = []
        self.tokens: dict[str, str] = {}
        self.resets: list[str] = []

    def on_stage_start(self, stage_name: str, **kwargs: Any) -> None:
        self.calls.append(("start", stage_name, "", kwargs))

    def on_stage_end(self, stage_name: str, **kwargs: Any) -> None:
        self.calls.append(("end", stage_name, "", kwargs))

    def on_stage_progress(self, stage_name: str, message: str, **kwargs: Any) -> None:
        self.calls.append(("progress", stage_name, message, kwargs))

    def on_stage_error(self, stage_name: str, **kwargs: Any) -> None:
        self.calls.append(("error", stage_name, kwargs.get("reason", ""), kwargs))

    def on_section_token(self, section_id: str, text: str) -> None:
        self.tokens[section_id] = self.tokens.get(section_id, "") + text

    def on_section_reset(self, section_id: str) -> None:
        self.resets.append(section_id)
        self.tokens[section_id] = ""

    def lines(self) -> list[str]:
        return [f"{kind}:{stage}:{message}".rstrip(":") for kind, stage, message, _ in self.calls]


def english_request():
    """The English original with its clarifications, as the engine takes them."""
    from reqstudio.modes.rewrite import ClarificationItem, RewriteRequest

    return RewriteRequest(
        original_content=ORIGINAL_EN,
        clarifications=[ClarificationItem(**c) for c in CLARIFICATIONS],
    )


def write_inputs(folder: Path) -> tuple[Path, Path]:
    """The English original and its clarifications as the files the CLI reads."""
    original = folder / "original.md"
    original.write_text(ORIGINAL_EN, encoding="utf-8")
    clarifications = folder / "clarifications.json"
    clarifications.write_text(json.dumps(CLARIFICATIONS), encoding="utf-8")
    return original, clarifications
