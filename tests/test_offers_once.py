"""What a browser session was offered (a run to resume, an answer's Regenerate button) is
offered once per session, and forgotten with the session: a server that runs for weeks keeps
no record of the tabs closed long ago."""

from __future__ import annotations

import gc
import uuid

from chainlit.context import ChainlitContext, context_var
from chainlit.session import HTTPSession

from reqstudio.web import rendering


def in_a_session() -> HTTPSession:
    session = HTTPSession(id=f"offers-{uuid.uuid4()}", client_type="webapp", thread_id="t-1")
    context_var.set(ChainlitContext(session))
    return session


async def test_an_offer_is_made_once_per_session_and_forgotten_with_it():
    first = in_a_session()
    assert rendering.first_offer("regenerate:a-1")
    assert not rendering.first_offer("regenerate:a-1")  # the browser's second connection
    rendering.forget_offer("regenerate:a-1")  # it could not be made: asked again
    assert rendering.first_offer("regenerate:a-1")

    second = in_a_session()  # another tab: its own offers
    assert rendering.first_offer("regenerate:a-1")
    assert {first, second} <= set(rendering.OFFERED)

    context_var.set(None)
    del first, second  # both sessions end (Chainlit deletes them): nothing refers to them
    gc.collect()
    assert not any(s.id.startswith("offers-") for s in rendering.OFFERED)
