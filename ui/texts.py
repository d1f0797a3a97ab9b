"""The app's own UI text in the browser user's language, from the message catalogue
(reqstudio/messages.py, locales/*.toml); Chainlit's translations cover its chrome."""

from __future__ import annotations

import chainlit as cl

from reqstudio.messages import catalog, language_code, text


def lang() -> str:
    """'zh' or 'en', from the browser's language."""
    try:
        language = cl.context.session.language or "en-US"
    except Exception:
        language = "en-US"
    return language_code(language)


def counted(number: int, noun: str, plural: str | None = None, zh_unit: str = "") -> str:
    """`1 round`, `2 rounds` in English; in Chinese the number and `zh_unit` (no plural)."""
    if lang() == "zh":
        return f"{number} {zh_unit}".strip()
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


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
