"""Bounds for the bundled offline model (SmolLM2-135M under llama.cpp), which decodes against a
schema or grammar: short one-line strings, few items, and sections that end inside its output
budget with a finish reason (left free, it rambles until the length limit)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

ONE_LINE = r'^[^"\\\n]{1,160}$'
SECTION_ID = r"^sec-[0-9]{2}$"
MAX_ITEMS = 6
# A section body: up to three paragraphs; the grammar's end forces a "stop" finish well
# before `SECTION_TOKENS`.
SECTION_GRAMMAR = r"""root ::= para ("\n\n" para){0,2} "\n"
para ::= [^\n#`] [^\n`]{10,240}"""
SECTION_TOKENS = 600


def bounded_schema(
    schema: type[BaseModel], id_fields: tuple[str, ...] = ("section_id",)
) -> dict[str, Any]:
    """`schema`'s JSON schema with every free string one line and every list short; strings
    named in `id_fields` must be section ids."""

    def walk(node: Any, name: str = "") -> Any:
        if isinstance(node, dict):
            bounded = {key: walk(value, key) for key, value in node.items()}
            if bounded.get("type") == "string" and "enum" not in bounded:
                bounded.pop("maxLength", None)
                bounded.pop("minLength", None)
                bounded["pattern"] = SECTION_ID if name in id_fields else ONE_LINE
            if bounded.get("type") == "array":
                bounded["maxItems"] = min(bounded.get("maxItems", MAX_ITEMS), MAX_ITEMS)
            if "properties" in bounded:
                bounded["properties"] = {
                    key: walk(value, key) for key, value in node["properties"].items()
                }
            return bounded
        if isinstance(node, list):
            return [walk(value, name) for value in node]
        return node

    return walk(schema.model_json_schema())


def response_format(factory: Any, schema: type[BaseModel]) -> dict[str, Any] | None:
    """The factory's response format, bounded when the embedded model answers."""
    bounded = bounded_schema(schema) if factory.endpoint.embedded else None
    return factory.response_format(schema, json_schema=bounded)
