"""A project's ids stay: the items of a new import matched to the items the project holds, so a
requirement keeps its human id and its uid from one import to the next.

A new item is the same as a stored one when (in this order) it carries the stored item's uid
(a ReqIF object's IDENTIFIER; a document's uid is only a hash of its id), the document writes
the stored item's id, its text is the same, or its text is similar (the diff's own matching,
`reqstudio.workspace.diff.match_items`). The project's current items are tried before the
ones removed earlier. A matched item keeps the stored uid, and the stored id unless the
document writes one of its own. An item matched to nothing keeps the id the document writes;
an id assigned on reading (`REQ-n`, `SEC-n`) is replaced by the next of that prefix that no
item of the project has ever had, so an id is never given to two requirements.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable
from dataclasses import dataclass

from reqstudio.workspace.items import Item, Link, uid_for

_ASSIGNED = re.compile(r"^(REQ|SEC)-\d+$")


@dataclass
class Kept:
    """A new item as the project will hold it, and the stored item it continues (None: new)."""

    item: Item
    before: Item | None


def _uid_is_identity(item: Item) -> bool:
    """Whether the item's uid names it (a ReqIF identifier, or a document's own id) rather than
    being a hash of an id assigned on reading."""
    return item.id_kept or item.uid != uid_for("item:" + item.id)


def _match(stored: list[Item], new: list[Item]) -> dict[int, Item]:
    """id(new item) -> the stored item it continues."""
    from reqstudio.workspace.diff import match_items

    found: dict[int, Item] = {}
    by_uid = {item.uid: item for item in stored}
    rest_new = []
    used: set[int] = set()
    for item in new:
        before = by_uid.get(item.uid) if _uid_is_identity(item) else None
        if before is not None and id(before) not in used:
            found[id(item)] = before
            used.add(id(before))
        else:
            rest_new.append(item)
    rest_stored = [item for item in stored if id(item) not in used]
    for old, new_item, _ in match_items(rest_stored, rest_new):
        found[id(new_item)] = old
    return found


def _next_id(prefix: str, taken: set[str]) -> str:
    n = 0
    while True:
        n += 1
        candidate = f"{prefix}-{n}"
        if candidate not in taken:
            taken.add(candidate)
            return candidate


def keep_ids(
    project_key: str, current: list[Item], removed: list[Item], new: Iterable[Item]
) -> list[Kept]:
    """The new items (copies) with the project's ids and uids, their links pointing at those,
    each with the stored item it continues. `current` and `removed` are the project's items
    (stored ids are the project's: `id_kept` True on them)."""
    items = [copy.deepcopy(item) for item in new]
    found: dict[int, Item] = {}
    for group in (lambda i: i.kind == "heading", lambda i: i.kind != "heading"):
        mine = [item for item in items if group(item)]
        for pool in (current, removed):
            rest = [item for item in mine if id(item) not in found]
            taken_before = {id(b) for b in found.values()}
            candidates = [item for item in pool if group(item) and id(item) not in taken_before]
            found.update(_match(candidates, rest))
    taken_ids = {item.id for item in (*current, *removed)}
    taken_ids |= {item.id for item in items if item.id_kept}
    used_uids = {item.uid for item in (*current, *removed)}
    renamed: dict[str, tuple[str, str]] = {}  # the import's uid -> (uid, id) in the project
    kept: list[Kept] = []
    for item in items:
        before = found.get(id(item))
        old_uid, identity = item.uid, _uid_is_identity(item)
        if before is not None:
            item.uid = before.uid
            if not item.id_kept:
                item.id = before.id
        else:
            if not item.id_kept and _ASSIGNED.match(item.id):
                item.id = _next_id(item.id.split("-")[0], taken_ids)
            if not identity or item.uid in used_uids:
                key = f"project:{project_key}:{item.id}"
                item.uid = uid_for(key)
                while item.uid in used_uids:
                    key += "'"
                    item.uid = uid_for(key)
        used_uids.add(item.uid)
        item.id_kept = True  # the project's id from now on
        renamed[old_uid] = (item.uid, item.id)
        kept.append(Kept(item, before))
    for entry in kept:
        entry.item.links = [
            Link(link.type, *renamed.get(link.target, (link.target, link.target_id)))
            for link in entry.item.links
        ]
    return kept
