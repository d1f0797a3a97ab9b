"""The mode selector: each mode is a Chainlit chat profile with its own starters.

Switching profile starts a new thread in that mode; its first message confirms the mode now on.
Only modes that work are listed here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import chainlit as cl
from chainlit.config import ChainlitConfigOverrides, FeaturesSettings, McpFeature
from chainlit.input_widget import Slider

from reqstudio.messages import both, catalog, keys_under, language_code
from reqstudio.web.session import name_thread, send_notice
from reqstudio.web.texts import Catalog, lang

Handler = Callable[[cl.Message], Awaitable[None]]


@dataclass
class StarterSpec:
    label: dict[str, str]
    message: dict[str, str]


@dataclass
class ModeSpec:
    id: str
    title: dict[str, str]
    description: dict[str, str]
    on_message: Handler
    icon: str = ""
    starters: list[StarterSpec] = field(default_factory=list)
    on_start: Callable[[], Awaitable[None]] | None = None
    on_resume: Callable[[dict], Awaitable[None]] | None = None
    # The mode's own settings, shown in the panel (⚙) after the thread's model and temperature
    # (reqstudio/web/settings_panel.py sends them on start and on resume, with the thread's values).
    settings: Callable[[], list] | None = None
    # What the thread is about, from its first message (None: the message's first line, or a
    # pasted document's title); the history shows `<mode id> · <that>` (`thread_name`).
    thread_title: Callable[[str], str] | None = None
    # The user may edit a sent message (Chainlit's edit) and regenerate an answer: the
    # mode's memory rewinds to that message (reqstudio/web/edits.py).
    editable: bool = False
    # MCP servers connected with the composer's plug join this mode's tools (Agent mode);
    # in every other mode the plug is not shown: it would connect a server nothing uses.
    uses_mcp: bool = False


TITLE_CHARS = 60


def subject_of(text: str) -> str:
    """What a first message is about, short: a pasted document's title (its first heading),
    else its first line; Markdown marks taken off, cut at TITLE_CHARS."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    heading = next((line for line in lines[:20] if line.startswith("#")), None)
    subject = heading if heading and len(lines) > 3 else lines[0]
    return shortened(" ".join(subject.lstrip("#>*-+ ").replace("**", "").split()))


def shortened(subject: str, limit: int = TITLE_CHARS) -> str:
    """`subject` in at most `limit` characters, an ellipsis marking a cut: at the last space
    when the text has words (not inside one), else between two characters (Chinese)."""
    if len(subject) <= limit:
        return subject
    cut = subject[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:  # a word of more than half the limit is cut inside after all
        cut = cut[:space]
    return cut.rstrip(" ,;:，、；：") + "…"


def document_title(text: str, file_name: str = "") -> str:
    """What an uploaded document is about: its first heading, else its first line when that
    is short enough to be a title, else its file name without the ending."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    heading = next((line for line in lines[:20] if line.startswith("#")), None)
    if heading is None and lines and len(lines[0]) <= TITLE_CHARS:
        heading = lines[0]
    if heading:
        return shortened(" ".join(heading.lstrip("#>*-+ ").replace("**", "").split()))
    return shortened(Path(file_name).stem)


async def name_thread_after_document(mode: ModeSpec, text: str, file_name: str = "") -> None:
    """A thread whose subject is a document (Review, Rewrite) takes the first one's title as
    its name, not the message that came with it ("Please review this")."""
    if cl.user_session.get("thread_named_by_document"):
        return
    title = document_title(text, file_name)
    if title:
        cl.user_session.set("thread_named_by_document", True)
        await name_thread(f"{mode.id} · {title}", replace=True)


def thread_name(mode: ModeSpec, first_message: str) -> str:
    """The thread's name in the history: its mode, then what it is about (`SRS · 图书馆借阅系统`,
    `Review · 宠物医院 SRS`), so the history shows each thread's mode."""
    subject = mode.thread_title(first_message) if mode.thread_title else first_message
    prefix = f"{mode.id} · "
    subject = subject_of(subject.removeprefix(prefix))
    return f"{prefix}{subject}" if subject else ""


def catalog_texts(namespace: str) -> dict:
    """A mode's title, description and starters from the message catalogue
    (`<namespace>.mode.*`, `<namespace>.starters.N.*`), as ModeSpec takes them."""
    numbers = sorted({key.split(".")[2] for key in keys_under(f"{namespace}.starters")}, key=int)
    return {
        "title": both(f"{namespace}.mode.title"),
        "description": both(f"{namespace}.mode.description"),
        "starters": [
            StarterSpec(
                label=both(f"{namespace}.starters.{n}.label"),
                message=both(f"{namespace}.starters.{n}.message"),
            )
            for n in numbers
        ],
    }


def intro_notice(namespace: str) -> Callable[[], Awaitable[None]]:
    """A mode's start: its introduction (`<namespace>.intro`) as a notice, so the starters stay."""

    async def send_intro() -> None:
        await send_notice(Catalog(namespace)("intro"))

    return send_intro


def catalog_mode(mode_id: str, **fields: Any) -> ModeSpec:
    """A mode whose texts are in the catalogue under its id in lower case: title, description
    and starters (`catalog_texts`), and, for a mode with no start of its own, the introduction
    shown when a thread starts (`intro_notice`) where the catalogue has one."""
    namespace = mode_id.lower()
    if f"{namespace}.intro" in catalog("en"):
        fields.setdefault("on_start", intro_notice(namespace))
    return ModeSpec(id=mode_id, **catalog_texts(namespace), **fields)


def rounds_slider(setting_id: str, label: str, initial: int) -> Slider:
    """A mode's chat setting for how many rounds a run may take (1 to 10)."""
    return Slider(id=setting_id, label=label, initial=initial, min=1, max=10, step=1)


MODES: dict[str, ModeSpec] = {}
DEFAULT_MODE = "Chat"


def profile_overrides(mode: ModeSpec) -> ChainlitConfigOverrides | None:
    """What a mode's chat profile changes in Chainlit's features: its message edit, on for
    the modes that can rewind their memory (off in config.toml), and the MCP plug, off for
    the modes that use no MCP tools (on in config.toml)."""
    features: dict[str, Any] = {}
    if mode.editable:
        features["edit_message"] = True
    if not mode.uses_mcp:
        features["mcp"] = McpFeature(enabled=False)
    return ChainlitConfigOverrides(features=FeaturesSettings(**features)) if features else None


def register_mode(mode: ModeSpec) -> None:
    MODES[mode.id] = mode


def current_mode() -> ModeSpec:
    return MODES.get(cl.user_session.get("chat_profile") or DEFAULT_MODE, MODES[DEFAULT_MODE])


def chat_profiles(language: str | None) -> list[cl.ChatProfile]:
    code = language_code(language or "")
    return [
        cl.ChatProfile(
            name=mode.id,
            display_name=mode.title[code],
            markdown_description=mode.description[code],
            icon=mode.icon or None,
            default=mode.id == DEFAULT_MODE,
            starters=[
                cl.Starter(label=s.label[code], message=s.message[code]) for s in mode.starters
            ],
            config_overrides=profile_overrides(mode),
        )
        for mode in MODES.values()
    ]


def mode_title(mode: ModeSpec) -> str:
    return mode.title[lang()]
