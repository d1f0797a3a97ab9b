"""The app's own text in each language, by key: one TOML file per language under `reqstudio/locales/`
(`en-US.toml`, `zh-CN.toml`), looked up by dotted key (`review.step_round`) and filled in with
`str.format`. The browser UI and the CLI read the same files; a key missing in one language is
a test failure (tests/test_messages.py), not a blank on screen."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

# One catalogue per language, installed as package data (`reqstudio/locales/*.toml`).
LOCALES_DIR = Path(str(resources.files("reqstudio") / "locales"))
LOCALES = {"en": "en-US", "zh": "zh-CN"}


def language_code(language: str) -> str:
    """'zh' for any Chinese locale name (zh, zh-CN, zh_TW.UTF-8), else 'en'."""
    return "zh" if (language or "").lower().startswith("zh") else "en"


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, str]:
    flat: dict[str, str] = {}
    for key, value in table.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


@cache
def catalog(language: str) -> dict[str, str]:
    """Every message of a language, by dotted key."""
    path = LOCALES_DIR / f"{LOCALES[language_code(language)]}.toml"
    with path.open("rb") as file:
        return _flatten(tomllib.load(file))


def text(key: str, language: str, **values: object) -> str:
    """The message `key` in `language` ('zh'/'en' or a locale name), formatted with `values`."""
    return catalog(language)[key].format(**values)


def join(items: list[str], language: str) -> str:
    """Names listed as the language lists them ("a, b" / "a、b")."""
    return text("words.list_separator", language).join(items)


def both(key: str) -> dict[str, str]:
    """The message in every language, {'zh': ..., 'en': ...} (for mode titles and starters)."""
    return {code: catalog(code)[key] for code in LOCALES}


def keys_under(prefix: str) -> list[str]:
    """The keys below `prefix.` in catalogue order (`review.starters` → its starters' keys)."""
    return [key for key in catalog("en") if key.startswith(prefix + ".")]


def messages_under(prefix: str, language: str) -> dict[str, str]:
    """The messages below `prefix.` in a language, by the rest of their key, unformatted (a
    command's lines: `messages_under("cli.rewrite", "zh")["done"]`)."""
    start = prefix + "."
    return {k.removeprefix(start): v for k, v in catalog(language).items() if k.startswith(start)}
