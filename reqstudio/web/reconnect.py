"""What a tab was shown, shown again when its browser reconnects to the same session.

The browser reconnects its session on a new socket after a network blip, and also when it
starts a chat, opens a thread or restores a thread's mode: Chainlit's page then calls its
`connect` a second time and drops whatever the first socket still receives (it removes that
socket's listeners before closing it). Chainlit restores the session on the new socket but
sends nothing again, so what was sent in between was lost: a mode's greeting and settings
panel (seen: "Review mode is on" never appeared), a run's messages, and a question the run
waits for (AskAction), whose buttons then stayed on the page, disabled, with nothing in the
browser to answer it.

So each session keeps what it showed (`ShownState`): each message's latest state, streamed
tokens included, each element and button, the last settings panel (with the values the
session holds now) and commands, and the first interaction. When its browser reconnects,
after Chainlit's own handler, that is sent again: the browser takes a message or element it
already has as an update of it, and a button it may already show is first taken back, so
nothing appears twice. What was taken away (a deleted message, a removed element or button)
is taken away again: the removal too may have gone to the socket the page was leaving (seen:
a Resume offer clicked while the page reconnected stayed on the page, its removal lost). A
question the run still waits for is asked again on the new socket, for the time it has left
(`call_surviving_reconnects`). reqstudio/web/token_stream.py notes
every emit here; reqstudio/web/session.py replays on reconnect."""

from __future__ import annotations

import asyncio
import copy
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

MAX_KEPT = 1000  # messages (and elements, buttons, removals) kept per session, the latest ones
_LATEST = ("chat_settings", "set_commands", "first_interaction")  # only the last one counts


class ShownState:
    """What one session's browser was sent that a reconnecting browser needs again."""

    def __init__(self) -> None:
        self.messages: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.elements: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.actions: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.latest: dict[str, Any] = {}
        # what was taken away, by id: the removal events, sent again after what is shown
        self.removed: OrderedDict[str, tuple[str, dict[str, Any]]] = OrderedDict()
        self._reconnected: set[asyncio.Future] = set()

    @staticmethod
    def _keep(kept: OrderedDict[str, Any], key: str, item: Any) -> None:
        kept.pop(key, None)  # the latest place in the order: removals follow what they undo
        if len(kept) >= MAX_KEPT:
            kept.popitem(last=False)
        kept[key] = item

    def _shown(self, kept: OrderedDict[str, dict[str, Any]], item: Any) -> None:
        if not isinstance(item, dict) or not item.get("id"):
            return
        key = str(item["id"])
        self.removed.pop(key, None)  # shown again after it was taken away
        if key in kept:
            kept[key] = dict(item)
        else:
            self._keep(kept, key, dict(item))

    def _taken_away(self, kept: OrderedDict[str, dict[str, Any]], event: str, data: Any) -> None:
        if not isinstance(data, dict) or not data.get("id"):
            return
        key = str(data["id"])
        kept.pop(key, None)
        self._keep(self.removed, key, (event, dict(data)))

    def note(self, event: str, data: Any) -> None:
        """An event the session sent to its browser."""
        if event in ("new_message", "update_message", "stream_start"):
            self._shown(self.messages, data)
        elif event == "ask" and isinstance(data, dict):
            self._shown(self.messages, data.get("msg"))
        elif event == "delete_message":
            self._taken_away(self.messages, event, data)
        elif event == "element":
            self._shown(self.elements, data)
        elif event == "remove_element":
            self._taken_away(self.elements, event, data)
        elif event == "action":
            self._shown(self.actions, data)
        elif event == "remove_action":
            self._taken_away(self.actions, event, data)
        elif event in _LATEST:
            self.latest[event] = data

    def note_token(self, token: dict[str, Any]) -> None:
        """A streamed piece of a message's text, appended as the browser appends it."""
        message = self.messages.get(str(token.get("id")))
        if message is None:
            return
        field = "input" if token.get("isInput") else "output"
        if token.get("isSequence"):
            message[field] = token["token"]
        else:
            message[field] = (message.get(field) or "") + token["token"]

    def replay(self, settings_now: dict[str, Any]) -> list[tuple[str, Any]]:
        """The events that bring a reconnected browser back to what the session showed, in
        the order they were first shown; the settings panel with `settings_now`'s values."""
        events: list[tuple[str, Any]] = []
        if "first_interaction" in self.latest:
            events.append(("first_interaction", self.latest["first_interaction"]))
        if "chat_settings" in self.latest:
            events.append(
                ("chat_settings", with_values(self.latest["chat_settings"], settings_now))
            )
        if "set_commands" in self.latest:
            events.append(("set_commands", self.latest["set_commands"]))
        events += [("new_message", message) for message in self.messages.values()]
        events += [("element", element) for element in self.elements.values()]
        for action in self.actions.values():  # the browser adds a button it has again
            events += [("remove_action", action), ("action", action)]
        events += list(self.removed.values())  # harmless where the browser never had it
        return events

    def next_reconnect(self) -> asyncio.Future:
        """Done when the session's browser next reconnects."""
        future = asyncio.get_running_loop().create_future()
        self._reconnected.add(future)
        future.add_done_callback(self._reconnected.discard)
        return future

    def reconnected(self) -> None:
        for future in list(self._reconnected):
            if not future.done():
                future.set_result(None)


def with_values(widgets: Any, values: dict[str, Any]) -> Any:
    """Chainlit's settings widgets (tabs hold widgets of their own), each starting from the
    value the session holds now: the user may have changed it since the panel was sent."""
    widgets = copy.deepcopy(widgets)

    def fill(items: Any) -> None:
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            if isinstance(item.get("inputs"), list):
                fill(item["inputs"])
            elif item.get("id") in values:
                item["initial"] = values[item["id"]]

    fill(widgets)
    return widgets


async def call_surviving_reconnects(
    shown: ShownState,
    call: Callable[[str, Any, Any], Awaitable[Any]],
    event: str,
    data: Any,
    timeout: float | None,
) -> Any:
    """Chainlit's `emit_call` (`call`, read again each try: it is the current socket's), but
    asked again on the new socket whenever the browser reconnects before answering, with the
    time left of `timeout`. What the answer or the last try raises is the caller's."""
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    while True:
        left = None if deadline is None else max(deadline - loop.time(), 0.001)
        asked = asyncio.ensure_future(call(event, data, left))
        moved = shown.next_reconnect()
        try:
            await asyncio.wait({asked, moved}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the run that asked was stopped
            asked.cancel()
            moved.cancel()
            raise
        moved.cancel()
        if asked.done():
            return asked.result()
        # The browser reconnected before it answered: it dropped the question (Chainlit's
        # handler told it to), and the old socket's answer can no longer come.
        asked.cancel()
        await asyncio.wait({asked})
