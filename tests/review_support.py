"""Shared helpers for the Review tests (no tests here): scripted answers for each reviewer and
author, and a small document."""

from __future__ import annotations

import json
from typing import Any

from tests.scripted_server import Reply

# Text that occurs only in one prompt: routes a scripted answer to it.
RED = "You are the RED TEAM"
BLUE = "You are the BLUE TEAM"
CLIENT = "You are the CLIENT"
JUDGE = "You are the JUDGE"
AUTHOR = "You are the AUTHOR"

DOCUMENT = """# Pet Clinic Booking SRS

Owners book vet visits online; this document states what the system must do.

## 1. Users

Pet owners and vets use the system.

## 2. Booking

Owners book a visit with a vet. The search for free slots is fast.

## 3. Reminders

The system sends reminders before visits.
"""
DOCUMENT_ZH = """# 宠物医院预约系统需求

## 1. 用户

宠物主人和兽医使用本系统。

## 2. 预约

主人在线预约兽医，查询空闲时段要快。
"""


def fenced(value: Any) -> str:
    return "```json\n" + json.dumps(value, ensure_ascii=False) + "\n```"


def improvement(agent_id: str, priority: str = "high", issue: str = "", expected: str = ""):
    return {
        "agent_id": agent_id,
        "category": "performance",
        "issue": issue or f"{agent_id}: search speed is 'fast' without a number",
        "expected": expected or "state: free slots listed within 2 s for 95 % of searches",
        "priority": priority,
    }


def red_reply(*improvements: dict, score: int = 70, **kw: Any) -> Reply:
    body = {
        "improvements": list(improvements),
        "critical_issues_count": 0,
        "total_improvements": 0,
        "score": score,
    }
    return Reply(content=fenced(body), match=RED, **kw)


def blue_reply(keep: list[tuple[str, str]] = (), score: int = 80, **kw: Any) -> Reply:
    body = {
        "keep_as_is": [
            {"agent_id": a, "aspect": aspect, "reason": "clear and testable"} for a, aspect in keep
        ],
        "enhancement_suggestions": [],
        "score": score,
    }
    return Reply(content=fenced(body), match=BLUE, **kw)


def client_reply(score: int = 75, **kw: Any) -> Reply:
    body = {
        "business_gaps": [
            {
                "aspect": "timeline",
                "gap": "no launch date for online booking",
                "impact": "cannot plan the clinic's staffing",
                "required_info": "a milestone plan by week",
            }
        ],
        "market_concerns": [],
        "feasibility_concerns": [],
        "score": score,
    }
    return Reply(content=fenced(body), match=CLIENT, **kw)


def judge_reply(
    score: int = 75, conflicts: bool = True, agent_id: str = "sec-03", **kw: Any
) -> Reply:
    body = {
        "prioritized_improvements": [
            {"priority": 1, "agent_id": agent_id, "task": "give the search time", "rationale": "x"}
        ],
        "consensus_issues": [
            {
                "issue": "search speed has no number",
                "agent_id": agent_id,
                "raised_by": ["red_team", "client"],
            }
        ],
        "conflicting_views": [
            {
                "aspect": "booking_flow",
                "agent_id": agent_id,
                "red_team": "the flow lacks cancellation",
                "blue_team": "the flow is clear as it is",
                "ruling": "keep the flow, add cancellation as one sentence",
            }
        ]
        if conflicts
        else [],
        "score": score,
    }
    return Reply(content=fenced(body), match=JUDGE, **kw)


def panel(*improvements: dict, score: int = 70, keep=(), **kw: Any) -> list[Reply]:
    """One round's four answers: red (the given improvements), blue, client, judge."""
    return [
        red_reply(*improvements, score=score, **kw),
        blue_reply(keep, score=score, **kw),
        client_reply(score=score, **kw),
        judge_reply(score=score),
    ]


def author_reply(agent_id: str, body: str, **kw: Any) -> Reply:
    return Reply(content=body, match=f'<section id="{agent_id}"', **kw)


def closing_round(*improvements: dict, agent_id: str = "sec-03") -> list[Reply]:
    """A round after which the review ends: the red team's `improvements` (low-priority ones,
    or none), blue, client, and a judge ruling on `agent_id` with no conflicts."""
    return [
        red_reply(*improvements),
        blue_reply(),
        client_reply(),
        judge_reply(conflicts=False, agent_id=agent_id),
    ]


def two_rounds(finding: dict, revision: Reply) -> list[Reply]:
    """A review that ends after two rounds: the red team's `finding`, an author's `revision`,
    then a round that finds only a low-priority issue in sec-04, with no conflicts."""
    return [
        red_reply(finding),
        blue_reply(),
        client_reply(),
        judge_reply(),
        revision,
        *closing_round(improvement("sec-04", "low")),
    ]


def requests_for(server, marker: str) -> list[str]:
    return server.texts_with(marker)


def judge_low() -> Reply:
    """A judge whose only task is of rank 3: alone it asks for nothing high-priority."""
    body = {
        "prioritized_improvements": [
            {"priority": 3, "agent_id": "sec-03", "task": "polish wording", "rationale": "x"}
        ],
        "consensus_issues": [],
        "conflicting_views": [],
        "score": 70,
    }
    return Reply(content=fenced(body), match=JUDGE)
