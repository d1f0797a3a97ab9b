"""What keeps a message honest: who sent it comes only from the society, never from what an
agent wrote, and the same message is not delivered twice to the user.

- Payload keys that name a sender or the envelope (`from`, `sender`, `to`, ...) are renamed
  `payload_<key>` before delivery, and the sender is told so in its tool result.
- A line of content or payload that starts like the society's source line ("【来自") is shown
  with a plain bracket ("[来自"), so no text can pose as a source line.
- Two messages are the same when type, whitespace-normalised content and payload match."""

from __future__ import annotations

import json
from typing import Any

from reqstudio.modes.team.protocol import Message, unforgeable

__all__ = [
    "ENVELOPE_KEYS",
    "LoopWatch",
    "duplicate_of",
    "fingerprint",
    "plain_name",
    "rename_envelope_keys",
    "unforgeable",
]

# keys of the envelope the society fills itself (requirements 9.1, 9.5)
ENVELOPE_KEYS = frozenset(
    {
        "from",
        "from_id",
        "sender",
        "sender_id",
        "sender_role",
        "to",
        "id",
        "message_type",
        "self_introduction",
        "来自",
        "发送者",
    }
)


def rename_envelope_keys(payload: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """`payload` with envelope keys renamed `payload_<key>`, and the keys renamed."""
    renamed: list[str] = []
    clean: dict[str, Any] = {}
    for key, value in payload.items():
        if key.strip().lower() in ENVELOPE_KEYS:
            new = f"payload_{key.strip()}"
            while new in payload or new in clean:
                new = f"payload_{new}"
            clean[new] = value
            renamed.append(key)
        else:
            clean[key] = value
    return clean, renamed


def plain_name(name: str) -> bool:
    """A role name fit for a source line: one line, without the line's own brackets, so a
    role cannot be named to read as another sender ("x）的消息】\n【来自用户的消息】")."""
    return not any(ch in name for ch in "\n\r【】") and name not in ("user", "用户", "用户 / user")


def fingerprint(message: Message) -> str:
    return json.dumps(
        [message.message_type, " ".join(message.content.split()), message.payload],
        ensure_ascii=False,
        sort_keys=True,
    )


def duplicate_of(message: Message, delivered: list[Message]) -> Message | None:
    """An earlier message from the same sender to the same receiver with the same words."""
    mark = fingerprint(message)
    for earlier in delivered:
        if (
            earlier.sender == message.sender
            and earlier.to == message.to
            and fingerprint(earlier) == mark
        ):
            return earlier
    return None


class LoopWatch:
    """The same exchange between two agents twice over is a loop (A→B x, B→A y, A→B x,
    B→A y), and so is one agent sending the same message to another three times running."""

    def __init__(self) -> None:
        self._exchanges: dict[frozenset[str], list[tuple[str, str]]] = {}

    def see(self, message: Message) -> str | None:
        """What looped, once `message` closes a loop; otherwise None."""
        pair = frozenset((message.sender, message.to))
        history = self._exchanges.setdefault(pair, [])
        history.append((message.sender, fingerprint(message)))
        del history[:-4]
        looped = len(history) == 4 and history[0] == history[2] and history[1] == history[3]
        same = len(history) >= 3 and history[-1] == history[-2] == history[-3]
        if not (looped or same):
            return None
        a, b = sorted(pair)
        return f"{a} and {b} repeated the same exchange"
