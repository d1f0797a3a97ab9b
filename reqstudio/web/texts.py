"""The app's own UI text in the browser user's language, from the message catalogue
(reqstudio/messages.py, reqstudio/locales/*.toml); Chainlit's translations cover its chrome."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import chainlit as cl

from reqstudio.messages import catalog, language_code, text
from reqstudio.usage import known_total


def lang() -> str:
    """'zh' or 'en', from the browser's language."""
    try:
        language = cl.context.session.language or "en-US"
    except Exception:
        language = "en-US"
    return language_code(language)


def counted(number: int, noun: str) -> str:
    """A number with its noun, in the user's language, from the catalogue's `count.<noun>`:
    `1 round`, `2 rounds`, `2 轮` (`one` for 1, `other` for every other number)."""
    form = "one" if number == 1 else "other"
    return text(f"count.{noun}.{form}", lang(), n=number)


def sentences(*parts: str) -> str:
    """Sentences one after another in the user's language: each ends with a full stop (a
    reason may come without one), joined by a space in English and by nothing in Chinese."""
    language = lang()
    full_stop = text("words.full_stop", language)
    ended = []
    for part in (p.strip() for p in parts):
        if not part:
            continue
        if part[-1] not in ".。!！?？":
            part += full_stop
        ended.append(part)
    return text("words.sentence_separator", language).join(ended)


def token_figure(total: int, known: bool = True) -> str:
    """A token count as every mode shows it: the number when every call said what it used,
    else one word ("unknown" / "未知"), never a 0 or a dash that reads as a count."""
    return str(total) if known else t("tokens_unknown")


def usage_token_figure(usage: Mapping[str, Any]) -> str:
    """`token_figure` of a run's usage record (`UsageTracker.as_dict()`, as results carry it):
    unknown when some call did not report its tokens, or no call reported any."""
    total = known_total(usage)
    return token_figure(total or 0, total is not None)


class Catalog:
    """One part of the catalogue in the user's language: `tr = Catalog("review");
    tr("step_round", round=2)` reads `review.step_round`."""

    def __init__(self, namespace: str):
        self.namespace = namespace

    def __call__(self, key: str, **values: object) -> str:
        return text(f"{self.namespace}.{key}", lang(), **values)

    def get(self, key: str, default: str) -> str:
        """The message, or `default` where the catalogue has no such key (a code from outside)."""
        full = f"{self.namespace}.{key}"
        return text(full, lang()) if full in catalog(lang()) else default


t = Catalog("app")
