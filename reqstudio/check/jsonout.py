"""The check's JSON: `json.dumps(value, ensure_ascii=False, indent=2)`'s text, written by orjson.

With `indent` the standard library encodes in pure Python (its C encoder only writes compact
JSON): on a document of 10,000 requirements that was half a second of `reqstudio check
--json`, and a hand-written encoder still 0.4 s; orjson writes the same 13 MB in 0.04 s. The
text is the standard library's for every value the check writes (strings, integers, floats
rounded to three places, lists, dicts with string keys); orjson writes a float below 1e-4 in
plain decimals (0.00001, not 1e-05) and NaN and infinities, which are not JSON, as null."""

from __future__ import annotations

from typing import Any

import orjson


def fields_as_dict(value: object, names: tuple[str, ...]) -> dict[str, Any]:
    """The attributes `names` of `value`, in that order, as a dict for the JSON (a list
    copied, the rest as they are): what `dataclasses.asdict` gives for fields of plain values,
    without its deep copy of each one (a third of `--json`'s time on a document of 10,000
    requirements)."""
    found = {}
    for name in names:
        field = getattr(value, name)
        found[name] = list(field) if isinstance(field, list) else field
    return found


def dumps_indented(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode()
