"""A browser that reconnects to its session on a new socket is sent again what the session
showed it, and asked again what the run waits for, over the real app's Socket.IO endpoint.

Chainlit's page connects twice when it starts a chat or opens a thread, and drops what the
first socket still receives; Chainlit restores the session on the second socket and sent
nothing again. Seen in CI: "Review mode is on" never appeared after a mode switch, and a
paused SRS run's "Accept" stayed on the page, disabled, with nothing to answer it."""

from __future__ import annotations

from pathlib import Path

from reqstudio.web.reconnect import ShownState, with_values
from tests.apps import AppProcess
from tests.browser_support import provider_env
from tests.scripted_server import ScriptedLLMServer
from tests.socket_support import NO_ANSWER, ChatSocket, sign_in_cookie
from tests.test_tool_confirmation import INJECTED, notes_config, obeying_model


def greeting(event: str, data) -> bool:
    return event == "new_message" and "**Review** mode is on" in str(data.get("output"))


async def test_a_greeting_the_first_socket_took_is_shown_on_the_second(tmp_path: Path):
    with ScriptedLLMServer() as server:
        app = AppProcess(tmp_path / "data", provider_env(server)).start()
        cookie = sign_in_cookie(app.url)
        first = ChatSocket(app.url, cookie, profile="Review")
        second = ChatSocket(app.url, cookie, profile="Review", session_id=first.session_id)
        try:
            await first.connect()
            shown = await first.wait_for(greeting)
            await first.wait_for(lambda event, _: event == "chat_settings")
            await first.close()  # the page dropped this socket's events
            await second.connect()
            again = await second.wait_for(greeting, timeout=20)
            assert again["id"] == shown["id"]  # the same message: the browser updates it
            panel = await second.wait_for(lambda event, _: event == "chat_settings", timeout=20)
            assert {widget["id"] for widget in panel} >= {"review_pause"}
            assert [e for e, d in second.events if greeting(e, d)] == ["new_message"]
            assert "task_start" not in [event for event, _ in second.events]  # nothing runs
        finally:
            await first.close()
            await second.close()
            app.stop()


async def test_a_question_the_run_waits_for_is_asked_again_on_the_new_socket(tmp_path: Path):
    """The Agent asks to run write_note; the browser reconnects before anyone answers. The
    question comes again on the new socket, with its buttons, and the answer given there is
    the one the run acts on."""
    config, notes = notes_config(tmp_path)

    def allow(ask: dict) -> dict:
        buttons = [d for e, d in second.events if e == "action" and d["name"] == "allow_tool"]
        assert buttons and buttons[-1]["id"] in ask["spec"]["keys"]
        return buttons[-1]

    with ScriptedLLMServer() as server:
        env = provider_env(server) | {"REQSTUDIO_MCP_CONFIG": str(config)}
        app = AppProcess(tmp_path / "data", env).start()
        cookie = sign_in_cookie(app.url)
        first = ChatSocket(app.url, cookie, profile="Agent", answer_actions=lambda _: NO_ANSWER)
        second = ChatSocket(
            app.url, cookie, profile="Agent", session_id=first.session_id, answer_actions=allow
        )
        try:
            await first.connect()
            await first.wait_for(lambda event, _: event == "chat_settings")  # as a user waits
            obeying_model(server)
            await first.send("总结共享需求文档")
            asked = await first.wait_for(lambda event, _: event == "ask", timeout=60)
            await first.close()
            await second.connect()
            again = await second.wait_for(lambda event, _: event == "ask", timeout=20)
            assert again["msg"]["id"] == asked["msg"]["id"]
            await second.wait_for(
                lambda event, data: (
                    event == "new_message" and "文档列出两条需求" in str(data.get("output"))
                ),
                timeout=60,
            )
            assert notes.read_text(encoding="utf-8") == INJECTED + "\n"  # allowed on socket 2
            names = [event for event, _ in second.events]
            assert names.index("task_start") < names.index("ask")  # the stop button, then
        finally:
            await first.close()
            await second.close()
            app.stop()


def test_what_is_shown_again_is_each_thing_once_in_its_latest_state():
    shown = ShownState()
    shown.note("new_message", {"id": "m1", "output": "Hel"})
    shown.note_token({"id": "m1", "token": "lo", "isSequence": False, "isInput": False})
    shown.note("new_message", {"id": "m2", "output": "gone"})
    shown.note("delete_message", {"id": "m2"})
    shown.note("action", {"id": "a1", "name": "accept", "forId": "m1"})
    shown.note("action", {"id": "a2", "name": "refuse", "forId": "m1"})
    shown.note("remove_action", {"id": "a2"})
    shown.note("chat_settings", [{"id": "t", "type": "tab", "inputs": [{"id": "x", "initial": 1}]}])
    shown.note("token_usage", 12)  # counted by the browser: never sent twice
    events = shown.replay({"x": 5})
    assert events == [
        ("chat_settings", [{"id": "t", "type": "tab", "inputs": [{"id": "x", "initial": 5}]}]),
        ("new_message", {"id": "m1", "output": "Hello"}),
        ("remove_action", {"id": "a1", "name": "accept", "forId": "m1"}),
        ("action", {"id": "a1", "name": "accept", "forId": "m1"}),
        # taken away again: the removal may have gone to the socket the page was leaving
        ("delete_message", {"id": "m2"}),
        ("remove_action", {"id": "a2"}),
    ]
    shown.note("action", {"id": "a2", "name": "refuse", "forId": "m1"})  # offered again
    assert ("remove_action", {"id": "a2"}) not in shown.replay({})
    panel = [{"id": "x", "initial": 1}]
    assert with_values(panel, {"x": 2}) == [{"id": "x", "initial": 2}]
    assert panel == [{"id": "x", "initial": 1}]  # what was sent is left as it was
