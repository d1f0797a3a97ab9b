"""Items written as a ReqIF 1.2 file (or a .reqifz zip of one), built with StrictDoc's `reqif`
library's model and unparser, valid against the OMG ReqIF 1.2 schema.

The mapping, as DOORS-style importers expect it (docs/workspace.md has the table):
- one SPEC-OBJECT-TYPE per kind ("Heading", "Functional Requirement", "Non-functional
  Requirement", "Constraint", "Information"), so the kind comes back on import;
- `ReqIF.ForeignID` (string) the human id; `ReqIF.Text` (XHTML) the text, lines as `<br/>`;
  `ReqIF.ChapterName` (string) a heading's title;
- `priority` and `status` as enumerations of the values the items use, `source` as a string;
  an attribute read from a ReqIF file keeps its data type (a value that does not fit it, e.g. a
  date that is no xsd:dateTime, makes that attribute a string);
- each distinct first element of the items' section paths is a SPECIFICATION, the rest of the
  path the SPEC-HIERARCHY under the heading items; items without a section are SPEC-OBJECTs in
  no hierarchy;
- links as SPEC-RELATIONs, one SPEC-RELATION-TYPE per link type;
- IDENTIFIERs: `_<uid>` for objects (so the uid survives a round trip), `_<uuid>` derived
  deterministically for the rest.
"""

from __future__ import annotations

import io
import re
import uuid
import zipfile
from datetime import UTC, datetime
from html import escape

from reqstudio.workspace.items import Item, ItemSet

TYPE_NAMES = {
    "heading": "Heading",
    "functional": "Functional Requirement",
    "non-functional": "Non-functional Requirement",
    "constraint": "Constraint",
    "information": "Information",
    "test": "Test Case",
}
_ENUMERATED = ("priority", "status")
_VALID = {
    "integer": re.compile(r"[+-]?\d+"),
    "real": re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"),
    "boolean": re.compile(r"true|false|1|0"),
    "date": re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?"),
}
_NAMESPACE = uuid.UUID("0d6f2b7e-3c41-5a8e-b2d9-6e1f4a7c9b25")


def _identifier(*parts: str) -> str:
    """A deterministic xsd:ID for a non-object element (a type, a definition, a hierarchy)."""
    return "_" + str(uuid.uuid5(_NAMESPACE, "\x1f".join(parts)))


def _datatypes(items: list[Item]) -> dict[str, str]:
    """Each attribute's data type: the one it was read with, `enumeration` for priority and
    status, else string; a value that does not fit its type makes the attribute a string."""
    types: dict[str, str] = {}
    for item in items:
        for name, value in item.attributes.items():
            wanted = item.datatypes.get(name) or (
                "enumeration" if name in _ENUMERATED else "string"
            )
            if isinstance(value, list) and wanted != "enumeration":
                wanted = "string"
            if types.get(name, wanted) != wanted:
                wanted = "string"
            pattern = _VALID.get(wanted)
            if pattern is not None and not pattern.fullmatch(str(value)):
                wanted = "string"
            if types.get(name) == "string":
                wanted = "string"
            types[name] = wanted
    return types


def _xhtml(text: str) -> str:
    lines = [escape(line, quote=False) for line in text.split("\n")]
    return "<xhtml:div>" + "<xhtml:br/>".join(lines) + "</xhtml:div>"


def build_reqif(item_set: ItemSet, title: str = "", now: datetime | None = None) -> str:
    """The ReqIF XML of `item_set`."""
    from reqif.models.reqif_core_content import ReqIFCoreContent
    from reqif.models.reqif_data_type import (
        ReqIFDataTypeDefinitionBoolean,
        ReqIFDataTypeDefinitionDateIdentifier,
        ReqIFDataTypeDefinitionEnumeration,
        ReqIFDataTypeDefinitionInteger,
        ReqIFDataTypeDefinitionReal,
        ReqIFDataTypeDefinitionString,
        ReqIFDataTypeDefinitionXHTML,
        ReqIFEnumValue,
    )
    from reqif.models.reqif_namespace_info import ReqIFNamespaceInfo
    from reqif.models.reqif_req_if_content import ReqIFReqIFContent
    from reqif.models.reqif_reqif_header import ReqIFReqIFHeader
    from reqif.models.reqif_spec_object import ReqIFSpecObject, SpecObjectAttribute
    from reqif.models.reqif_spec_object_type import ReqIFSpecObjectType, SpecAttributeDefinition
    from reqif.models.reqif_spec_relation import ReqIFSpecRelation
    from reqif.models.reqif_spec_relation_type import ReqIFSpecRelationType
    from reqif.models.reqif_specification import ReqIFSpecification
    from reqif.models.reqif_specification_type import ReqIFSpecificationType
    from reqif.models.reqif_types import SpecObjectAttributeType as Kind
    from reqif.reqif_bundle import ReqIFBundle
    from reqif.unparser import ReqIFUnparser

    stamp = (now or datetime.now(UTC)).isoformat(timespec="seconds")
    items = item_set.items
    attribute_types = _datatypes(items)
    kinds = {
        "string": Kind.STRING,
        "xhtml": Kind.XHTML,
        "enumeration": Kind.ENUMERATION,
        "integer": Kind.INTEGER,
        "real": Kind.REAL,
        "boolean": Kind.BOOLEAN,
        "date": Kind.DATE,
    }

    # data types: one per simple type, one enumeration per enumerated attribute
    data_types: list = [
        ReqIFDataTypeDefinitionString(
            "DT-STRING", last_change=stamp, long_name="String", max_length="1000000"
        ),
        ReqIFDataTypeDefinitionXHTML("DT-XHTML", last_change=stamp, long_name="XHTML"),
    ]
    used_types = set(attribute_types.values())
    optional_types = {  # written only when an attribute has the type
        "integer": (
            ReqIFDataTypeDefinitionInteger,
            {
                "long_name": "Integer",
                "max_value": "9223372036854775807",
                "min_value": "-9223372036854775808",
            },
        ),
        "real": (
            ReqIFDataTypeDefinitionReal,
            {
                "accuracy": 15,
                "long_name": "Real",
                "max_value": "1.7976931348623157E308",
                "min_value": "-1.7976931348623157E308",
            },
        ),
        "boolean": (ReqIFDataTypeDefinitionBoolean, {"long_name": "Boolean"}),
        "date": (ReqIFDataTypeDefinitionDateIdentifier, {"long_name": "Date"}),
    }
    for kind, (definition, fields) in optional_types.items():
        if kind in used_types:
            data_types.append(definition(f"DT-{kind.upper()}", last_change=stamp, **fields))
    simple_ref = {
        t: f"DT-{t.upper()}" for t in ("string", "xhtml", "integer", "real", "boolean", "date")
    }
    enum_refs: dict[str, str] = {}
    enum_values: dict[str, dict[str, str]] = {}
    for name, kind in attribute_types.items():
        if kind != "enumeration":
            continue
        seen: list[str] = []
        for item in items:
            value = item.attributes.get(name)
            for one in value if isinstance(value, list) else [] if value is None else [value]:
                if one not in seen:
                    seen.append(one)
        enum_refs[name] = _identifier("enumeration", name)
        enum_values[name] = {v: _identifier("enum-value", name, v) for v in seen}
        data_types.append(
            ReqIFDataTypeDefinitionEnumeration(
                enum_refs[name],
                last_change=stamp,
                long_name=name,
                values=[
                    ReqIFEnumValue(
                        ref, key=str(n), last_change=stamp, other_content="", long_name=v
                    )
                    for n, (v, ref) in enumerate(enum_values[name].items())
                ],
            )
        )
    multi = {
        name
        for item in items
        for name, value in item.attributes.items()
        if isinstance(value, list) and attribute_types.get(name) == "enumeration"
    }

    # one spec object type per kind, each with the attribute definitions its items use
    spec_types: list = []
    definitions: dict[tuple[str, str], str] = {}  # (kind, attribute name) -> definition id

    def define(kind: str, name: str, datatype: str) -> SpecAttributeDefinition:
        identifier = _identifier("attribute", kind, name)
        definitions[(kind, name)] = identifier
        return SpecAttributeDefinition(
            attribute_type=kinds[datatype],
            identifier=identifier,
            datatype_definition=enum_refs.get(name) or simple_ref[datatype],
            last_change=stamp,
            long_name=name,
            multi_valued=(name in multi) if datatype == "enumeration" else None,
        )

    for kind, type_name in TYPE_NAMES.items():
        of_kind = [item for item in items if item.kind == kind]
        if not of_kind:
            continue
        own = ["ReqIF.ForeignID", "ReqIF.ChapterName" if kind == "heading" else "ReqIF.Text"]
        attribute_definitions = [
            define(kind, "ReqIF.ForeignID", "string"),
            define(kind, own[1], "string" if kind == "heading" else "xhtml"),
        ]
        for name in dict.fromkeys(n for item in of_kind for n in item.attributes):
            if name not in own:
                attribute_definitions.append(define(kind, name, attribute_types[name]))
        spec_types.append(
            ReqIFSpecObjectType(
                _identifier("type", kind),
                last_change=stamp,
                long_name=type_name,
                attribute_definitions=attribute_definitions,
            )
        )

    def value_of(item: Item, name: str, value: str | list[str]) -> SpecObjectAttribute:
        datatype = attribute_types.get(name, "string")
        ref = definitions[(item.kind, name)]
        if datatype == "enumeration":
            chosen = value if isinstance(value, list) else [value]
            return SpecObjectAttribute(kinds[datatype], ref, [enum_values[name][v] for v in chosen])
        if datatype == "xhtml":
            return SpecObjectAttribute(kinds[datatype], ref, _xhtml(str(value)))
        return SpecObjectAttribute(kinds[datatype], ref, str(value))

    spec_objects = []
    for item in items:
        own_name = "ReqIF.ChapterName" if item.kind == "heading" else "ReqIF.Text"
        values = [
            SpecObjectAttribute(Kind.STRING, definitions[(item.kind, "ReqIF.ForeignID")], item.id),
            SpecObjectAttribute(
                Kind.STRING if item.kind == "heading" else Kind.XHTML,
                definitions[(item.kind, own_name)],
                item.text if item.kind == "heading" else _xhtml(item.text),
            ),
            *(value_of(item, n, v) for n, v in item.attributes.items() if n != own_name
              and n != "ReqIF.ForeignID"),
        ]  # fmt: skip
        spec_object = ReqIFSpecObject(
            identifier="_" + item.uid,
            attributes=values,
            spec_object_type=_identifier("type", item.kind),
            last_change=stamp,
        )
        spec_objects.append(spec_object)

    specification_type = ReqIFSpecificationType(
        _identifier("specification-type"), last_change=stamp, long_name="Specification"
    )
    spec_types.append(specification_type)
    relation_types: dict[str, str] = {}
    relations = []
    for item in items:
        for n, link in enumerate(item.links):
            if link.type not in relation_types:
                relation_types[link.type] = _identifier("relation-type", link.type)
                spec_types.append(
                    ReqIFSpecRelationType(
                        relation_types[link.type],
                        last_change=stamp,
                        # (the library writes this name as given: escaped here)
                        long_name=escape(link.type, quote=True),
                    )
                )
            relations.append(
                ReqIFSpecRelation(
                    identifier=_identifier("relation", item.uid, str(n), link.target),
                    relation_type_ref=relation_types[link.type],
                    source="_" + item.uid,
                    target="_" + link.target,
                    last_change=stamp,
                )
            )

    specifications = [
        ReqIFSpecification(
            identifier=_identifier("specification", name),
            last_change=stamp,
            long_name=name,
            specification_type=specification_type.identifier,
            children=children,
        )
        for name, children in _hierarchies(items, stamp).items()
    ]
    content = ReqIFReqIFContent(
        data_types=data_types,
        spec_types=spec_types,
        spec_objects=spec_objects,
        spec_relations=relations,
        specifications=specifications,
        spec_relation_groups=None,
    )
    header = ReqIFReqIFHeader(
        identifier=_identifier("header", title or item_set.title),
        creation_time=stamp,
        repository_id="reqstudio",
        req_if_tool_id="ReqStudio",
        req_if_version="1.0",  # the schema's fixed value for ReqIF 1.0, 1.1 and 1.2 files
        source_tool_id="ReqStudio",
        title=escape(title or item_set.title or "Requirements", quote=False),
    )
    bundle = ReqIFBundle(
        namespace_info=ReqIFNamespaceInfo.create_default(),
        req_if_header=header,
        core_content=ReqIFCoreContent(content),
        tool_extensions_tag_exists=False,
        lookup=None,
        exceptions=[],
    )
    return ReqIFUnparser.unparse(bundle)


def _hierarchies(items: list[Item], stamp: str) -> dict[str, list]:
    """Each specification's SPEC-HIERARCHY: an item sits under the heading item its section
    path ends with (the nearest one that exists)."""
    from reqif.models.reqif_spec_hierarchy import ReqIFSpecHierarchy

    roots: dict[str, list] = {}
    nodes: dict[tuple[str, ...], ReqIFSpecHierarchy] = {}
    for item in items:
        if not item.section:
            continue
        children = roots.setdefault(item.section[0], [])
        path = tuple(item.section)
        parent = None
        while len(path) > 1 and parent is None:
            parent = nodes.get(path)
            path = path if parent is not None else path[:-1]
        level = parent.level + 1 if parent is not None else 1
        node = ReqIFSpecHierarchy(
            identifier=_identifier("hierarchy", item.uid),
            spec_object="_" + item.uid,
            level=level,
            last_change=stamp,
            editable=None,
            is_table_internal=None,
        )
        if parent is None:
            children.append(node)
        else:
            parent.children = [*(parent.children or []), node]
        if item.kind == "heading":
            nodes[(*item.section, item.text)] = node
    return roots


def build_reqifz(item_set: ItemSet, name: str, title: str = "") -> bytes:
    """A .reqifz: a zip holding the one .reqif file `name`."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, build_reqif(item_set, title))
    return buffer.getvalue()
