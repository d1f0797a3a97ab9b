"""SRS's Resume offer shown again (a reconnect) and taken (a click) take turns: a click handled
while the offer was going out again was undone by it, and the offer stayed on the page after
the click (CI, under load). A screen applies the events as the browser does; each event
yields to the loop, as a socket write may."""

from __future__ import annotations

import asyncio
from typing import Any

import chainlit as cl
from chainlit.context import ChainlitContext, context_var
from chainlit.emitter import BaseChainlitEmitter
from chainlit.session import HTTPSession

from reqstudio.web.srs.mode import show_offer_again, take_offer


class Screen(BaseChainlitEmitter):
    """The buttons on the page, by id, as the action events leave them."""

    def __init__(self, session: HTTPSession):
        super().__init__(session)
        self.buttons: dict[str, dict[str, Any]] = {}
        self.removing = asyncio.Event()  # the first removal is on its way

    async def emit(self, event: str, data: Any) -> None:
        if event == "remove_action":
            self.removing.set()
        await asyncio.sleep(0)  # a socket write lets other tasks run
        if event == "action":
            self.buttons[data["id"]] = data
        elif event == "remove_action":
            self.buttons.pop(data["id"], None)

    async def send_step(self, step_dict):
        await asyncio.sleep(0)


async def test_a_click_while_the_offer_is_shown_again_leaves_no_button():
    session = HTTPSession(id="srs-offer-turns", client_type="webapp", thread_id="t-1")
    screen = Screen(session)
    context_var.set(ChainlitContext(session, screen))
    action = cl.Action(name="srs_resume", payload={"run": "srs:t-1:1"}, label="继续运行")
    cl.user_session.set(
        "srs_offer",
        {"session": session.id, "ids": ["offer-1"], "text": "上次的 SRS 运行没有完成。",
         "action": action.id, "run": "srs:t-1:1"},
    )  # fmt: skip
    screen.buttons[action.id] = action.to_dict()  # the offer as the first connection showed it

    again = asyncio.create_task(show_offer_again("srs:t-1:1"))
    await screen.removing.wait()  # it looked (not taken yet) and takes the old button back
    clicked = asyncio.create_task(take_offer(action))  # the click comes now
    await asyncio.gather(again, clicked)

    assert action.id not in screen.buttons  # clicked: the offer's button is gone
    assert cl.user_session.get("srs_offer_taken")["id"] == action.id
