"""The check's buttons in the browser, over the app's real socket: a document pasted in Review
mode gets the check's step and one button per finding; marking a finding wrong (with a
reason) stores the verdict in the app's database for this user and thread, and "check again"
no longer reports it, listing it among the suppressed. "Suggest a rewrite" shows the model's
rewrite as a word diff with the meaning guard's verdict."""

from __future__ import annotations

import json
import sqlite3
import uuid
from datetime import UTC, datetime
from pathlib import Path

from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.scripted_server import Reply, ScriptedLLMServer
from tests.socket_support import ChatSocket, sign_in_cookie

DOCUMENT = """# Library system

- FR-1: The system shall respond quickly to a search request.
- FR-2: The librarian shall approve each loan within 2 days.
"""


def answer(ask: dict) -> dict | None:
    """What the user answers: "wrong" to the judge's question, a reason to the next one."""
    if ask["spec"]["type"] == "action":
        return {"id": str(uuid.uuid4()), "name": "wrong", "payload": {"v": "wrong"},
                "label": "Wrong: do not report it", "forId": ask["spec"]["step_id"]}  # fmt: skip
    return {
        "id": str(uuid.uuid4()), "threadId": "", "name": "user", "type": "user_message",
        "output": "a term the glossary defines", "createdAt": datetime.now(UTC).isoformat(),
    }  # fmt: skip


def shown(chat: ChatSocket, text: str):
    return lambda event, data: (
        event in ("new_message", "update_message") and text in str(data.get("output"))
    )


async def test_a_finding_marked_wrong_is_stored_and_not_reported_again(tmp_path: Path):
    with ScriptedLLMServer() as server:
        env = provider_env(server) | {"REQSTUDIO_RETRY_BACKOFF_SCALE": "0.01"}
        app = AppProcess(tmp_path / "data", env).start()
        chat = ChatSocket(app.url, sign_in_cookie(app.url), profile="Review", answer_actions=answer)
        try:
            await chat.connect()
            server.script(
                Reply(
                    content=json.dumps({"rewrite": "The system shall respond to a search "
                                        "request within TBD seconds."}),
                    match=("The checker found", "respond quickly to a search request"),
                ),
                Reply(
                    content=json.dumps({"rewrite": "The manager shall approve each loan "
                                        "within 2 days."}),
                    match=("The checker found", "approve each loan"),
                ),
            )  # fmt: skip
            await chat.send(DOCUMENT)
            await chat.wait_for(shown(chat, "Mark a finding wrong or right"), timeout=60)
            await chat.wait_for(  # the buttons come after their message
                lambda event, data: event == "action" and data["name"] == "check_again", timeout=60
            )
            buttons = [data for event, data in chat.events if event == "action"]
            judge = next(
                b for b in buttons if b["name"] == "check_judge" and b["label"].startswith("FR-1")
            )
            assert "quickly" in judge["label"]
            assert any(b["name"] == "check_suggest" and "FR-1" in b["label"] for b in buttons)

            await chat.click(judge)
            await chat.wait_for(shown(chat, "Marked wrong"), timeout=60)
            rows = (
                sqlite3.connect(tmp_path / "data" / "history.db")
                .execute(
                    'SELECT "threadId", "rule", "term", "verdict", "reason", "context" '
                    "FROM check_verdicts"
                )
                .fetchall()
            )
            assert len(rows) == 1
            thread, rule, term, verdict, reason, context = rows[0]
            assert (term, verdict, reason) == ("quickly", "wrong", "a term the glossary defines")
            assert thread == chat.thread_id and "respond quickly" in context

            again = next(b for b in buttons if b["name"] == "check_again")
            await chat.click(again)
            step = await chat.wait_for(shown(chat, "Suppressed by verdicts"), timeout=60)
            table = step["output"]
            suppressed = table.split("#### Suppressed by verdicts")[1]
            assert (
                f"`{rule}`" in suppressed and "(reason: a term the glossary defines)" in suppressed
            )
            before = table.split("#### Suppressed by verdicts")[0]
            assert f"| FR-1 | 3 | `{rule}`" not in before
            assert "1 suppressed by verdicts" in table

            suggest = next(b for b in buttons if b["name"] == "check_suggest")
            assert suggest["label"] == "Suggest a rewrite: FR-1"
            await chat.click(suggest)
            said = await chat.wait_for(shown(chat, "Rewrite of FR-1"), timeout=60)
            assert "Rewrite of FR-1: keeps the meaning; findings" in said["output"]
            assert "~~quickly~~" in said["output"] and "**within TBD seconds**" in said["output"]
            await chat.wait_until_idle()
            # said once: the step's title says it is done, the message shows the rewrite
            assert [m["type"] for m in chat.shown() if "Rewrite of FR-1" in m["output"]] == [
                "assistant_message"
            ]
        finally:
            await chat.close()
            app.stop()


async def test_the_buttons_speak_chinese_to_a_chinese_browser(tmp_path: Path):
    from tests.socket_tabs import Tab

    with ScriptedLLMServer() as server:
        env = provider_env(server) | {"REQSTUDIO_RETRY_BACKOFF_SCALE": "0.01"}
        app = AppProcess(tmp_path / "data", env).start()
        tab = Tab(app, mode="Review", language="zh-CN")
        try:
            await tab.open()
            await tab.send("# 图书馆系统需求\n\n- FR-1：系统应快速响应读者提交的图书查询请求。\n")
            await tab.until_shown("可以把某个问题标为误报或确认", timeout=60)
            await tab.until(lambda: tab.action("check_again") is not None, timeout=60)
            assert tab.action("check_again")["label"] == "重新检查"
            assert tab.action("check_suggest")["label"] == "建议改写：FR-1"
            judge = tab.action("check_judge")
            assert judge["label"].startswith("FR-1 · ") and "快速" in judge["label"]
            assert judge["tooltip"] == "把这个问题标为误报或确认"
        finally:
            await tab.close()
            app.stop()
