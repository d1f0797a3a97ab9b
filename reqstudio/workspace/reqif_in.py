"""A ReqIF 1.2 file (.reqif, or .reqifz: a zip of them) read into items, with StrictDoc's
`reqif` library (it parses every element of the standard and keeps tool files' oddities out of
our way; we only map its model to items).

What the standard allows is read, whichever tool wrote the file: SPEC-OBJECTs with string,
XHTML, enumeration, integer, real, boolean and date values; one or several SPECIFICATIONs (each
one's name is the first element of its items' section path); the SPEC-HIERARCHY as section
paths; SPEC-RELATIONs as links typed by their SPEC-RELATION-TYPE; relation groups (their
relations are read, the grouping is said to be dropped). Names are the ReqIF Implementation
Guide's where a tool uses them (`ReqIF.ForeignID`, `ReqIF.Text`, `ReqIF.ChapterName`,
`ReqIF.Name`), else the usual words of an attribute's long name (an "ID", a "Text" or
"Description"). Whatever is not read, or read only in part, is one line of `skipped`.
"""

from __future__ import annotations

import re
import zipfile
from html import unescape
from pathlib import Path

from reqstudio.workspace.items import (
    Item,
    ItemsError,
    ItemSet,
    Link,
    assign_ids,
    assign_uids,
    kind_from_words,
    uid_for,
    uid_from_identifier,
)
from reqstudio.workspace.skips import Skip

_DATATYPES = {
    "STRING": "string",
    "XHTML": "xhtml",
    "ENUMERATION": "enumeration",
    "INTEGER": "integer",
    "REAL": "real",
    "BOOLEAN": "boolean",
    "DATE": "date",
}


def _key(name: str) -> str:
    return re.sub(r"[\s._\-:]+", "", name).casefold()


# attribute names (compared without case, spaces and punctuation) in order of preference
_ID_NAMES = ("reqifforeignid", "foreignid", "id", "identifier", "reqid", "requirementid", "编号")
_ID_LAST_WORDS = ("id", "puid", "uid")
_TEXT_NAMES = ("reqiftext", "text", "objecttext", "requirementtext", "statement", "description")
_TEXT_WORDS = ("text", "txt", "description", "statement")
_CHAPTER_NAMES = ("reqifchaptername", "chaptername", "objectheading", "heading")
_NAME_NAMES = ("reqifname",)
_KIND_NAMES = ("type", "kind", "category", "reqtype", "objecttype", "requirementtype", "类型")
_KNOWN = {
    "priority": ("priority", "优先级"),
    "status": ("status", "state", "状态"),
    "source": ("source", "origin", "来源"),
}


def xhtml_text(value: str) -> str:
    """The text of an XHTML value: blocks and line breaks as new lines, spaces collapsed."""
    text = re.sub(r"<(?:[\w-]+:)?br\s*/?>", "\n", value)
    text = re.sub(r"</(?:[\w-]+:)?(?:p|div|li|tr|h[1-6]|table|ul|ol)\s*>", "\n", text)
    text = re.sub(r"<[^>]+>", "", text)
    lines = [re.sub(r"[ \t\r\f\v]+", " ", unescape(line)).strip() for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def read_reqif(path: Path) -> ItemSet:
    """The items of a .reqif or .reqifz file."""
    from reqif.models.error_handling import ReqIFSchemaError
    from reqif.parser import ReqIFParser

    try:
        if path.suffix.lower() == ".reqifz":
            bundles = _zip_bundles(path)
        else:
            bundles = [(path.name, ReqIFParser.parse(str(path)))]
    except (ReqIFSchemaError, UnicodeDecodeError, OSError, zipfile.BadZipFile) as exc:
        raise ItemsError(f"{path.name} is not a ReqIF file that can be read ({exc})") from None
    except Exception as exc:  # the library asserts on some malformed files
        raise ItemsError(f"{path.name} is not a ReqIF file that can be read ({exc!r})") from None
    result = ItemSet([])
    for name, bundle in bundles:
        one = _bundle_items(bundle, name if len(bundles) > 1 else "")
        result.items += one.items
        result.skipped += one.skipped
        result.title = result.title or one.title
    assign_ids(result.items, {item.id for item in result.items if item.id})
    assign_uids(result.items)
    return result


def _zip_bundles(path: Path) -> list:
    from reqif.parser import ReqIFParser

    bundles = []
    with zipfile.ZipFile(path) as archive:
        for member in archive.namelist():
            if member.lower().endswith(".reqif"):
                text = archive.read(member).decode("utf-8")
                bundles.append((member, ReqIFParser.parse_from_string(text)))
    if not bundles:
        raise ItemsError(f"{path.name} holds no .reqif file")
    return bundles


class _Definitions:
    """The attribute definitions of a file's types: identifier -> (name, data type, datatype
    definition ref); and the datatypes' enumeration values."""

    def __init__(self, bundle) -> None:
        content = bundle.core_content.req_if_content
        self.bundle = bundle
        self.attributes: dict[str, tuple[str, str, str]] = {}
        self.type_names: dict[str, str] = {}
        for spec_type in content.spec_types or []:
            self.type_names[spec_type.identifier] = spec_type.long_name or spec_type.identifier
            definitions = getattr(spec_type, "attribute_definitions", None) or getattr(
                spec_type, "spec_attributes", None
            )
            for definition in definitions or []:
                self.attributes[definition.identifier] = (
                    definition.long_name or definition.identifier,
                    _DATATYPES.get(definition.attribute_type.name, "string"),
                    definition.datatype_definition,
                )
        self.enum_values: dict[str, str] = {}
        for datatype in content.data_types or []:
            for value in getattr(datatype, "values", None) or []:
                # (KEY and OTHER-CONTENT are the value's embedded data, not its name)
                self.enum_values[value.identifier] = value.long_name or value.identifier


def _value(attribute, definitions: _Definitions) -> str | list[str]:
    kind = attribute.attribute_type.name
    if kind == "XHTML":
        return xhtml_text(attribute.value or "")
    if kind == "ENUMERATION":
        values = [definitions.enum_values.get(v, v) for v in attribute.value or []]
        return values[0] if len(values) == 1 else values
    return "" if attribute.value is None else str(attribute.value)


def _pick(values: dict[str, str | list[str]], names: tuple[str, ...]) -> str | None:
    keyed = {_key(name): name for name in values}
    for wanted in names:
        if wanted in keyed:
            return keyed[wanted]
    return None


def _pick_by_words(values: dict, words: tuple[str, ...], last: bool = False) -> str | None:
    for name in values:
        parts = [p.casefold() for p in re.split(r"[\s._\-:]+", name) if p]
        if parts and (parts[-1] in words if last else any(p in words for p in parts)):
            return name
    return None


def _known_name(name: str) -> str:
    """`priority`, `status` or `source` for an attribute named so ("Priority", "FUNC-REQ-STATUS",
    "优先级"), else the name itself."""
    parts = [p.casefold() for p in re.split(r"[\s._\-:]+", name) if p]
    for known, names in _KNOWN.items():
        if _key(name) in names or (parts and parts[-1] in names):
            return known
    return name


def _plain(value: str | list[str] | None) -> str:
    return ", ".join(value) if isinstance(value, list) else (value or "")


def _object_item(spec_object, definitions: _Definitions, section: list[str], prefix: str, skipped):
    """The item of one SPEC-OBJECT (its id, text and kind from its values and type)."""
    from reqstudio.check.parse import binding_words

    values: dict[str, str | list[str]] = {}
    datatypes: dict[str, str] = {}
    for attribute in spec_object.attributes:
        known = definitions.attributes.get(attribute.definition_ref)
        if known is None:
            skipped.append(
                Skip(
                    "undeclared_attribute",
                    object=spec_object.identifier,
                    definition=attribute.definition_ref,
                )
            )
            name = attribute.definition_ref
            datatype = _DATATYPES.get(attribute.attribute_type.name, "string")
        else:
            name, datatype, _ = known
        values[name] = _value(attribute, definitions)
        datatypes[name] = datatype
    id_name = _pick(values, _ID_NAMES) or _pick_by_words(values, _ID_LAST_WORDS, last=True)
    chapter_name = _pick(values, _CHAPTER_NAMES)
    text_name = _pick(values, _TEXT_NAMES) or _pick_by_words(
        {k: v for k, v in values.items() if datatypes[k] in ("string", "xhtml")}, _TEXT_WORDS
    )
    title_name = _pick(values, _NAME_NAMES)
    type_name = definitions.type_names.get(spec_object.spec_object_type, "")
    chapter = _plain(values.get(chapter_name)) if chapter_name else ""
    text = _plain(values.get(text_name)) if text_name else ""
    used = {id_name, text_name}
    type_kind = kind_from_words(type_name)
    heading = bool(chapter) and (not text or type_kind == "heading")
    if heading:
        text, used = chapter, {id_name, chapter_name}
    elif not text and title_name:  # a tool that keeps the statement in the name
        text, used = _plain(values.get(title_name)), {id_name, title_name}
    elif text_name is None:
        text = spec_object.long_name or spec_object.description or ""
        skipped.append(Skip("no_text", object=spec_object.identifier))
    human_id = _plain(values.get(id_name)) if id_name else ""
    if human_id and prefix and datatypes.get(id_name) == "integer":
        human_id = prefix + human_id  # DOORS: the module's prefix and the absolute number
    kind_name = _pick(values, _KIND_NAMES)
    if heading:
        kind = "heading"
    else:
        kind = type_kind if type_kind not in (None, "functional", "heading") else None
        kind = kind or kind_from_words(_plain(values.get(kind_name)) if kind_name else "")
        kind = kind if kind not in (None, "heading") else type_kind
        if kind in (None, "heading"):
            kind = "functional" if binding_words(text) else "information"
    attributes: dict[str, str | list[str]] = {}
    kept_types: dict[str, str] = {}
    for name, value in values.items():
        if name in used:
            continue
        target = _known_name(name)
        attributes[target] = value
        kept_types[target] = datatypes[name]
    if spec_object.long_name and spec_object.long_name != text and not title_name:
        attributes["ReqIF.Name"] = spec_object.long_name  # the object's own name
        kept_types["ReqIF.Name"] = "string"
    return Item(
        human_id,
        uid_from_identifier(spec_object.identifier),
        text,
        section,
        kind,
        attributes,
        id_kept=bool(human_id),
        datatypes=kept_types,
    )


def _specification_title(specification, definitions: _Definitions) -> str:
    for value in specification.values or []:
        name = definitions.attributes.get(value.definition_ref, ("",))[0]
        if _key(name) == "reqifname":
            return _plain(_value(value, definitions))
    return specification.long_name or specification.identifier


def _specification_prefix(specification, definitions: _Definitions) -> str:
    for value in specification.values or []:
        name = definitions.attributes.get(value.definition_ref, ("",))[0]
        if _key(name) == "reqifprefix":
            return _plain(_value(value, definitions))
    return ""


def _bundle_items(bundle, member: str) -> ItemSet:
    skipped: list[str] = [Skip("unreadable", member, reason=str(exc)) for exc in bundle.exceptions]
    content = bundle.core_content.req_if_content if bundle.core_content else None
    if content is None:
        return ItemSet([], [*skipped, Skip("no_content", member)])
    definitions = _Definitions(bundle)
    objects = {o.identifier: o for o in content.spec_objects or []}
    items: list[Item] = []
    by_object: dict[str, Item] = {}
    title = ""
    for specification in content.specifications or []:
        spec_title = _specification_title(specification, definitions)
        title = title or spec_title
        prefix = _specification_prefix(specification, definitions)
        stack: list[tuple[int, str]] = []  # (level, heading text) above the current node
        for node in bundle.iterate_specification_hierarchy(specification):
            while stack and stack[-1][0] >= node.level:
                stack.pop()
            spec_object = objects.get(node.spec_object)
            if spec_object is None:
                skipped.append(
                    Skip("missing_object", member, node=node.identifier, object=node.spec_object)
                )
                continue
            if node.spec_object in by_object:
                skipped.append(
                    Skip(
                        "repeated_object",
                        member,
                        object=node.spec_object,
                        specification=spec_title,
                    )
                )
                continue
            section = [spec_title, *(name for _, name in stack)]
            item = _object_item(spec_object, definitions, section, prefix, skipped)
            _keep_uid_unique(item, spec_object.identifier, by_object)
            items.append(item)
            by_object[node.spec_object] = item
            if item.kind == "heading":
                stack.append((node.level, item.text))
    for identifier, spec_object in objects.items():
        if identifier not in by_object:  # in no specification: an item without a section
            item = _object_item(spec_object, definitions, [], "", skipped)
            _keep_uid_unique(item, identifier, by_object)
            items.append(item)
            by_object[identifier] = item
    for relation in content.spec_relations or []:
        source, target = by_object.get(relation.source), by_object.get(relation.target)
        if source is None or target is None:
            missing = relation.source if source is None else relation.target
            skipped.append(
                Skip("relation_target", member, relation=relation.identifier, object=missing)
            )
            continue
        link_type = definitions.type_names.get(relation.relation_type_ref, "")
        source.links.append(Link(link_type or relation.relation_type_ref, target.uid, ""))
        if relation.values:
            skipped.append(Skip("relation_values", member, relation=relation.identifier))
    for group in content.spec_relation_groups or []:
        count = len(group.spec_relations or [])
        skipped.append(
            Skip(
                "relation_group",
                member,
                group=group.identifier,
                name=group.long_name or "",
                count=count,
            )
        )
    if bundle.tool_extensions_tag_exists:
        skipped.append(Skip("tool_extensions", member))
    _fill_target_ids(items)
    return ItemSet(items, skipped, title)


def _keep_uid_unique(item: Item, identifier: str, by_object: dict[str, Item]) -> None:
    """Two identifiers that end with the same UUID ("_<uuid>", "rmf-<uuid>"): the second one
    gets the UUID 5 of its whole identifier."""
    if any(other.uid == item.uid for other in by_object.values()):
        item.uid = uid_for("reqif:" + identifier)


def _fill_target_ids(items: list[Item]) -> None:
    """Links name their targets' human ids once every item has one (after `assign_ids`)."""
    assign_ids(items, {item.id for item in items if item.id})
    assign_uids(items)
    by_uid = {item.uid: item for item in items}
    for item in items:
        for link in item.links:
            link.target_id = by_uid[link.target].id
