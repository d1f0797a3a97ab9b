"""A bad setting said in one line: the variable's name, its value (secrets hidden) and what is
allowed; read by `reqstudio.settings.load_settings` when the settings do not validate."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import AliasChoices, ValidationError
from pydantic_settings import SettingsError as SourceParseError

JSON_ERROR_PREFIX = "not valid JSON ("
SECRET_FIELDS = ("openai_api_key", "openai_evaluation_api_key", "users")
# Whole values of these may hold an API key: shown only field by field, never whole.
MAY_HOLD_KEYS = ("agent_function_call_model", "agent_answer_model")


def env_names(fields: dict[str, Any]) -> dict[str, str]:
    """Each settings field's environment variable (its first alias, else its name upper-cased)."""
    names = {}
    for name, info in fields.items():
        alias = info.validation_alias
        names[name] = alias.choices[0] if isinstance(alias, AliasChoices) else name.upper()
    return names


def describe_validation_error(error: ValidationError, fields: dict[str, Any]) -> str:
    """One line per bad variable: its name, its value (secrets hidden) and what is allowed.
    `fields`: the settings' model fields."""
    names = env_names(fields)
    secrets = {names[f] for f in SECRET_FIELDS}
    may_hold_keys = {names[f] for f in MAY_HOLD_KEYS}
    lines = []
    for item in error.errors():
        if not item.get("loc"):  # a check across settings: its message names them
            lines.append(
                f"Invalid settings: {item.get('msg', 'invalid').removeprefix('Value error, ')}"
            )
            continue
        loc = item["loc"]
        field = str(loc[0])  # the field name, or the alias it was given by
        env_name = names.get(field, field)
        value = item.get("input")
        detail = item.get("msg", "invalid").removeprefix("Value error, ")
        extra = ".".join(str(p) for p in loc[1:])
        where = f" (field {extra})" if extra else ""
        hidden = env_name in secrets or (
            env_name in may_hold_keys and (not extra or "api_key" in extra)
        )
        if detail.startswith(JSON_ERROR_PREFIX):
            lines.append(f"Invalid setting {env_name}{where}: {detail}")
            continue
        shown = "***" if hidden else json.dumps(value, ensure_ascii=False)
        lines.append(f"Invalid setting {env_name}={shown}{where}: {detail}")
    return "; ".join(lines)


def describe_source_error(error: SourceParseError, fields: dict[str, Any]) -> str:
    """A value the settings source could not decode (e.g. invalid JSON in AGENT_PRICES): one
    line naming the variable and the JSON error. The value is not shown (it may hold a key)."""
    found = re.search(r'field "([^"]+)"', str(error))
    field = found.group(1) if found else "?"
    env_name = env_names(fields).get(field, field.upper())
    cause = error.__cause__
    detail = (
        f"not valid JSON ({cause})"
        if isinstance(cause, json.JSONDecodeError)
        else str(cause or error)
    )
    return f"Invalid setting {env_name}: {detail}"
