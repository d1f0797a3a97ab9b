"""A session's side of its thread's saved state (mode, settings, each mode's memory): saved
after each turn, brought up to date before one.

Several tabs, on one instance or several, can hold one thread. Each session remembers the
state it last read or wrote (reqstudio/web/thread_versions.py); its writes carry that version and land
only over it, and when another tab wrote since, its change is made again on what that tab
wrote: values it changed are its own, a mode's memory gets its turn added again (`merging`),
everything else stays as the other tab left it. The session then holds the state as saved,
so its next request to the model has the other tab's turns as well as its own.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import chainlit as cl
from chainlit.data import get_data_layer

from reqstudio.web.thread_versions import (
    SESSION_KEYS,
    STATE_VERSION,
    Merger,
    StateChange,
    ThreadState,
    last_read,
    remember,
    snapshot,
)

log = logging.getLogger("reqstudio")


async def persist_thread_state(merging: Mapping[str, Merger] | None = None) -> None:
    """Save the session (mode, settings, memory) into the thread's metadata now.

    Chainlit itself only does this when the browser disconnects; saving after each turn means
    a resumed thread has its mode and memory even after the server was stopped abruptly.
    `merging` says, for a value this turn changed that another tab may have changed too, how
    to make this turn's change again on that tab's value (a memory: this turn added to it).
    """
    data_layer = get_data_layer()
    session = cl.context.session
    if data_layer is None or not session.thread_id:
        return
    state = session.to_persistable()
    save_state = getattr(data_layer, "save_state", None)
    change = StateChange(last_read(session), state, merging or {})
    try:
        if save_state is None:  # a data layer without versions: Chainlit's own save
            await data_layer.update_thread(thread_id=session.thread_id, metadata=state)
            return
        saved = await save_state(session.thread_id, change)
    except Exception:
        log.exception("could not save thread state")
        return
    if saved is None:
        held = getattr(data_layer, "held", None)
        if held is not None and held.of(session.thread_id):
            # held until the database is back (reqstudio/web/held_writes.py), to land before
            # the session's later writes: those carry only what changes after this one
            remember(session, snapshot(change.base.version, state))
        # else not saved (the database failed): the next write carries this change again
        return
    take_in(session, saved.values, saved, written_from=state)


async def refresh_thread_state() -> None:
    """Before a turn: take in what other tabs or instances saved to the thread since this
    session read it (their turns reach the model too). Changes of this session not saved yet
    are kept."""
    data_layer = get_data_layer()
    session = cl.context.session
    read_state = getattr(data_layer, "read_state", None)
    if read_state is None or not session.thread_id:
        return
    held = getattr(data_layer, "held", None)
    if held is not None and held.of(session.thread_id):
        return  # writes of the thread wait for the database: what is stored is older
    stored = await read_state(session.thread_id)
    base = last_read(session)
    if stored is None or stored.version == base.version:
        return
    log.info("thread %s: state version %d taken in (this tab had %d)", session.thread_id,
             stored.version, base.version)  # fmt: skip
    take_in(session, StateChange(base, session.to_persistable()).onto(stored.values), stored)


def take_in(
    session: Any,
    values: Mapping[str, Any],
    read: ThreadState,
    written_from: Mapping[str, Any] | None = None,
) -> None:
    """The session holds `values` from now on, and its next write starts from `read`.

    `written_from`: the session's state the write was made from. A value the session changed
    while the write was on its way (another task of the session set it) stays the session's,
    and its next write carries it."""
    held_now = session.to_persistable()
    for key in (held_now.keys() | values.keys()) - SESSION_KEYS:
        if written_from is not None and held_now.get(key) != written_from.get(key):
            continue
        if held_now.get(key) != values.get(key):
            cl.user_session.set(key, values.get(key))
    cl.user_session.set(STATE_VERSION, read.version)
    remember(session, snapshot(read.version, read.values))
