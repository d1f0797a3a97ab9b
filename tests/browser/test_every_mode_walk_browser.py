"""Every mode walked to its end in both languages, as a new user would: one run each of Chat, Agent, SRS, Review, Rewrite and Team, in zh-CN and en-US, with the
scripted provider answering in the page's language. While the run goes on the page is sampled:
no stretch of more than 15 s may pass with nothing changing on screen. At the end every step is
opened and the page is read: no word of the other language outside the user's own messages and
names, no raw JSON, no field names or status codes. Each mode's end state is photographed into
docs/screenshots/<mode>-end-<locale>.png.

The same walk runs against the bundled offline model in test_offline_walk_browser.py."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests import review_support as review
from tests import rewrite_support as rw
from tests.apps import ROOT, AppProcess, running_app
from tests.browser_support import attach, open_page, provider_env, send, switch_to_mode
from tests.fake_search import five_results
from tests.mode_walk import MODE_ON, Walk, finish_walk
from tests.scripted_server import Reply, ScriptedLLMServer, ToolCallScript
from tests.test_srs_support import CLARIFY, E_STORE, EVALUATE, doc_reply, explore_reply, parse_reply
from tests.test_srs_support import fenced as srs_fenced
from tests.test_team_run import answer, turn
from tests.test_team_run import send as say

pytestmark = pytest.mark.browser

SCREENSHOTS = ROOT / "docs" / "screenshots"
LOCALES = ["zh-CN", "en-US"]
FAKE_SEARCH = {
    "REQSTUDIO_SEARCH_BACKEND": "tests.fake_search:five_results",
    "PYTHONPATH": str(ROOT),
}


@pytest.fixture(scope="module")
def walk_app(
    llm_server_session: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AppProcess]:
    """One app for the twelve walks: each walk starts a new chat in its mode."""
    data = tmp_path_factory.mktemp("walk") / "data"
    env = provider_env(llm_server_session) | FAKE_SEARCH | {"REVIEW_MAX_ROUNDS": "2"}
    with running_app(data, env) as app:
        yield app


@dataclass
class Script:
    """What one mode's walk sends and what the scripted provider answers, in one language."""

    replies: list[Reply]
    message: str
    end: str  # text the end state shows
    attach: Path | None = None
    during: Callable[[Page], None] | None = None  # what the user does while it runs
    after: Callable[[Walk], None] | None = None  # what the user does once it ended
    content: set[str] = field(default_factory=set)  # others' words shown as they are
    allowed: set[str] = field(default_factory=set)  # names shown as they are
    code_is_content: bool = False  # code is tools' calls and results (Agent mode)


# --- the scripts, per mode and language -----------------------------------------------------

REASONING = "research agent"  # reqstudio/prompts/agent/react_system.md
ANSWER = "Write the final answer now"  # reqstudio/prompts/agent/answer_context.md


def chat(locale: str, tmp: Path) -> Script:
    said = {
        "zh-CN": ("好的需求有什么特征？", "好的需求可测试、无歧义、可追溯。"),
        "en-US": ("What makes a good requirement?", "A good requirement is testable and clear."),
    }[locale]
    return Script([Reply(content=said[1], chunk_chars=3, chunk_delay=0.02)], said[0], said[1])


def agent(locale: str, tmp: Path) -> Script:
    query, thought, final = {
        "zh-CN": ("IEEE 830 章节", "先搜索 IEEE 830 的章节。", "IEEE 830 的主要章节是引言、总体描述和具体需求 [1]。"),
        "en-US": ("IEEE 830 sections", "Search the IEEE 830 sections first.", "IEEE 830's main sections are introduction, overall description and specific requirements [1]."),
    }[locale]  # fmt: skip
    replies = [
        Reply(match=REASONING, content=thought,
              tool_calls=[ToolCallScript("web_search", {"query": query}),
                          ToolCallScript("get_current_time", {"timezone": "UTC"})]),
        Reply(match=REASONING, content={"zh-CN": "足够回答。", "en-US": "Enough to answer."}[locale]),
        Reply(match=ANSWER, content=final, chunk_chars=4, chunk_delay=0.02),
    ]  # fmt: skip
    results = five_results(query, 5)
    content = {r[k] for r in results for k in ("title", "body", "href")}
    message = {"zh-CN": "IEEE 830 有哪些章节？", "en-US": "What are the sections of IEEE 830?"}
    connect = {"zh-CN": "连接", "en-US": "Connect"}[locale]

    def mcp_dialog(walk: Walk) -> None:
        """Chainlit's own MCP dialog, opened from the composer, read in the page's language."""
        page = walk.page
        page.locator("#message-composer button[aria-haspopup=dialog]:has(svg.lucide-plug)").click()
        dialog = page.locator("[role=dialog]")
        expect(dialog.get_by_role("button", name=connect, exact=True).first).to_be_visible()
        walk.check_now()
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0)

    # The agent's MCP server and tools by their names; their calls and results as the tools
    # take and give them.
    return Script(
        replies, message[locale], final, content=content, after=mcp_dialog,
        allowed={"time", "web_search", "get_current_time", "convert_time"}, code_is_content=True,
    )  # fmt: skip


SRS_DOC = {
    "zh-CN": "# 软件需求规格说明\n\n## 1. 引言\n\n读者可以借阅图书。\n\n## 2. 具体需求\n\nFR-01 读者最多可借五本书。\n",
    "en-US": "# Software Requirements Specification\n\n## 1. Introduction\n\nReaders borrow books.\n\n## 2. Specific requirements\n\nFR-01 Readers borrow up to five books.\n",
}  # fmt: skip
METRICS = {"metrics": {
    "coverage": 0.8, "completeness": 0.6, "consistency": 0.9, "testability": 0.7, "clarity": 0.8,
    "traceability": 0.4, "scope_discipline": 0.9,
    "by_category": {"functional": 0.6, "non_functional": 0.5, "constraints": 0.3}}}  # fmt: skip


def srs(locale: str, tmp: Path) -> Script:
    parsed, explored, message = {
        "zh-CN": ("读者可以借书", "读者最多可借五本书", "图书馆借阅系统：读者借书、还书。"),
        "en-US": ("Readers borrow books", "Readers borrow up to five books", "A library lending system: readers borrow and return books."),
    }[locale]  # fmt: skip
    evaluate, evaluated = {"zh-CN": ("评估", "📊 与参考 SRS 对比的评估"),
                           "en-US": ("Evaluate", "📊 Evaluation against the reference SRS")}[locale]  # fmt: skip

    def evaluate_it(walk: Walk) -> None:
        button = walk.page.get_by_role("button", name=evaluate, exact=True)
        expect(button).to_be_enabled()
        button.click()
        walk.follow(evaluated)

    reason = {"zh-CN": "明确、可测试", "en-US": "clear and testable"}[locale]
    scores = [{"id": "FR-01", "score": 2, "reason": reason}]
    replies = [
        parse_reply(("FR-01", parsed)),
        explore_reply(("FR-01", explored)),
        Reply(content=srs_fenced(scores), match=CLARIFY),
        doc_reply(SRS_DOC[locale]),
        Reply(match=EVALUATE, content=json.dumps(METRICS)),
    ]
    done = {"zh-CN": "✅ 完成", "en-US": "✅ Done"}[locale]
    return Script(replies, message, done, attach=E_STORE / "reference.md", after=evaluate_it)


REVIEW_TEXT = {
    "zh-CN": {
        "file": "预约需求.md", "message": "请审阅这份文档", "document": review.DOCUMENT_ZH,
        "issue": "查询空闲时段“要快”没有给出响应时间", "expected": "95% 的查询在 2 秒内返回",
        "low": "用户一节没有说明兽医的账号由谁创建", "low_expected": "写明由管理员创建兽医账号",
        "category": "性能", "keep": "预约流程", "reason": "清楚、可测试",
        "gap": ("上线时间", "没有在线预约的上线日期", "无法安排人手", "按周的里程碑计划"),
        "judge": ("给出查询时间", "性能要可测", "查询速度没有数字", "预约流程", "缺少取消", "流程已经清楚", "保留流程，补一句取消规则"),
        "revised": "主人在线预约兽医；95% 的空闲时段查询在 2 秒内返回结果。\n",
        "end": "审阅结束",
    },
    "en-US": {
        "file": "booking.md", "message": "Review this document", "document": review.DOCUMENT,
        "issue": "the free-slot search is 'fast' with no number", "expected": "95 % of searches answer within 2 s",
        "low": "the users section does not say who creates vet accounts", "low_expected": "state that an administrator creates vet accounts",
        "category": "performance", "keep": "booking flow", "reason": "clear and testable",
        "gap": ("timeline", "no launch date for online booking", "cannot plan staffing", "a milestone plan by week"),
        "judge": ("give the search time", "speed must be testable", "search speed has no number", "booking flow", "the flow lacks cancellation", "the flow is clear as it is", "keep the flow, add one sentence on cancelling"),
        "revised": "Owners book a visit with a vet. 95 % of free-slot searches answer within 2 s.\n",
        "end": "Review finished",
    },
}  # fmt: skip


def review_replies(t: dict, section: str, high: bool, conflicts: bool) -> list[Reply]:
    red = [review.improvement("sec-01", "low", t["low"], t["low_expected"])]
    if high:
        red.insert(0, review.improvement(section, "high", t["issue"], t["expected"]))
    for finding in red:
        finding["category"] = t["category"]
    task, rationale, consensus, aspect, red_view, blue_view, ruling = t["judge"]
    judge = {
        "prioritized_improvements": [
            {"priority": 1, "agent_id": section, "task": task, "rationale": rationale}
        ],
        "consensus_issues": [
            {"issue": consensus, "agent_id": section, "raised_by": ["red_team", "client"]}
        ],
        "conflicting_views": [
            {"aspect": aspect, "agent_id": section, "red_team": red_view,
             "blue_team": blue_view, "ruling": ruling}
        ] if conflicts else [],
        "score": 75,
    }  # fmt: skip
    blue = {
        "keep_as_is": [{"agent_id": section, "aspect": t["keep"], "reason": t["reason"]}],
        "enhancement_suggestions": [],
        "score": 80,
    }
    aspect, gap, impact, info = t["gap"]
    client = {
        "business_gaps": [{"aspect": aspect, "gap": gap, "impact": impact, "required_info": info}],
        "market_concerns": [],
        "feasibility_concerns": [],
        "score": 75,
    }
    body = {"improvements": red, "critical_issues_count": 0, "total_improvements": 0}
    return [
        Reply(content=review.fenced(body | {"score": 70}), match=review.RED),
        Reply(content=review.fenced(blue), match=review.BLUE),
        Reply(content=review.fenced(client), match=review.CLIENT),
        Reply(content=review.fenced(judge), match=review.JUDGE),
    ]


def review_mode(locale: str, tmp: Path) -> Script:
    t = REVIEW_TEXT[locale]
    section = "sec-02" if locale == "zh-CN" else "sec-03"
    document = tmp / t["file"]
    document.write_text(t["document"], encoding="utf-8")
    replies = [
        *review_replies(t, section, high=True, conflicts=True),
        review.author_reply(section, t["revised"], chunk_chars=4, chunk_delay=0.02),
        *review_replies(t, section, high=False, conflicts=False),
    ]
    return Script(replies, t["message"], t["end"], attach=document)


REWRITE_TEXT = {
    "zh-CN": {
        "file": "宠物医院.md", "message": "请重写这份文档", "how": "不澄清，直接重写",
        "original": "# 宠物医院预约\n\n主人在线预约就诊，兽医查看当天的日程，系统发送提醒。\n支付方式：可能在线支付，待定。\n",
        "title": "宠物医院预约系统",
        "sections": [("概述", "说明系统用途和用户", 2), ("预约", "说明预约、改约和取消", 2)],
        "bodies": ["本系统供宠物主人预约就诊，兽医查看日程。\n", "主人选择兽医与空闲时段完成预约。\n"],
        "issue": "预约一节没有说明取消规则。", "patched": "主人选择兽医与空闲时段完成预约；就诊前 2 小时以前可取消。\n",
        "end": "重写完成",
    },
    "en-US": {
        "file": "clinic.md", "message": "Rewrite this document", "how": "Rewrite without",
        "original": "# Pet Clinic Booking\n\nOwners book visits online. Vets see their day. Reminders are sent.\nPayment: maybe online, to be decided.\n",
        "title": "Pet Clinic Booking System",
        "sections": [("Overview", "Say what the system is for", 2), ("Booking", "Describe booking and cancelling", 2)],
        "bodies": ["The system lets pet owners book clinic visits; vets see their schedule.\n", "Owners pick a vet and a free slot.\n"],
        "issue": "The booking section does not say how to cancel.", "patched": "Owners pick a vet and a free slot; they can cancel up to 2 hours before.\n",
        "end": "Rewrite done",
    },
}  # fmt: skip


def rewrite(locale: str, tmp: Path) -> Script:
    t = REWRITE_TEXT[locale]
    original = tmp / t["file"]
    original.write_text(t["original"], encoding="utf-8")
    outline = {
        "title": t["title"],
        "sections": [{"title": a, "goal": b, "level": c} for a, b, c in t["sections"]],
    }
    issue = {"section_id": "sec-02", "kind": "omission", "description": t["issue"],
             "suggestion": t["patched"].strip()}  # fmt: skip
    zh = locale == "zh-CN"
    outline_at, fill_at, review_at, patch_at = (
        (rw.OUTLINE_ZH, rw.FILL_ZH, rw.REVIEW_ZH, rw.PATCH_ZH)
        if zh
        else (rw.OUTLINE, rw.FILL, rw.REVIEW, rw.PATCH)
    )
    replies = [
        Reply(content=rw.fenced(outline), match=outline_at),
        *(Reply(content=b, match=fill_at, chunk_chars=4, chunk_delay=0.02) for b in t["bodies"]),
        Reply(content=rw.fenced({"issues": [issue]}), match=review_at),
        Reply(content=t["patched"], match=patch_at),
        Reply(content=rw.fenced({"issues": []}), match=review_at),
    ]

    def choose(page: Page) -> None:
        page.get_by_role("button", name=t["how"]).click()

    # the clarifications file's two fields, named as the user must write them
    return Script(
        replies, t["message"], t["end"], attach=original, during=choose,
        allowed={"question", "answer"},
    )  # fmt: skip


TEAM_TEXT = {
    "zh-CN": ("为图书馆座位预约系统列出可测的性能需求", "分析师", "性能需求已列好", "座位预约：95% 的预约请求在 1 秒内完成；支持 500 人同时在线。"),
    "en-US": ("List measurable performance requirements for a library seat booking system", "Analyst", "The performance requirements are listed", "Seat booking: 95 % of bookings complete within 1 s; 500 users online at once."),
}  # fmt: skip
TEAM_BRIEF = {
    "zh-CN": {"objective": "列出座位预约的性能需求", "constraints": ["每条需求可测"],
              "inputs": ["用户的任务"], "outputs": ["需求列表"], "completion_criteria": ["每条有数字"]},
    "en-US": {"objective": "List the seat booking's performance requirements",
              "constraints": ["each requirement testable"], "inputs": ["the user's task"],
              "outputs": ["a list of requirements"], "completion_criteria": ["each has a number"]},
}  # fmt: skip


def team(locale: str, tmp: Path) -> Script:
    task, analyst, report, final = TEAM_TEXT[locale]
    duties = {"zh-CN": "列出性能需求", "en-US": "lists performance requirements"}[locale]
    role = ToolCallScript("create_role", {"name": analyst, "role_prompt": duties, "duties": duties})
    spawn = ToolCallScript("spawn_agent", {"role": analyst, "brief": TEAM_BRIEF[locale]})
    replies = [
        *turn("root", role, spawn, match=task),
        *turn("agent-1", say("root", "status_report", report, {"status": "done"})),
        answer(final),
    ]
    return Script(replies, task, final)


SCRIPTS = {
    "chat": chat,
    "agent": agent,
    "srs": srs,
    "review": review_mode,
    "rewrite": rewrite,
    "team": team,
}


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("mode", list(SCRIPTS))
def test_every_mode_reads_in_one_language_with_no_internals(
    browser: Browser,
    walk_app: AppProcess,
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    output_dir: Path,
    mode: str,
    locale: str,
):
    script = SCRIPTS[mode](locale, tmp_path)
    llm_server.script(*script.replies)
    page = open_page(browser, walk_app.url, locale)
    expect(page.get_by_text(MODE_ON["chat"][locale], exact=False)).to_be_visible()
    if mode != "chat":
        switch_to_mode(page, mode, locale)
    if script.attach:
        attach(page, str(script.attach))
    send(page, script.message)
    walk = Walk(
        page, locale, content=script.content, allowed=script.allowed,
        code_is_content=script.code_is_content,
    )  # fmt: skip
    walk.follow(script.end, during=script.during)
    if script.after:
        script.after(walk)
    finish_walk(walk, SCREENSHOTS / f"{mode}-end-{locale}.png")
