"""Two versions of a set of requirements compared item by item: added, removed, changed and
moved, with the words that changed and whether the change touches the meaning.

Items are matched by their human id when both versions wrote it (an id assigned on reading is
no identity), then, among the rest, by the same text, then by text similarity (the share of
content words two texts have in common, `reqstudio.check.trace.content_words`), best pairs
first. Headings are not compared: their titles are section paths. A matched pair is "changed"
when its text or attributes differ, "moved" when its section path (below the document's title)
differs; a change of text is a change of meaning when `reqstudio.check.meaning` finds a modal
verb, number or unit, negation, condition, actor or named entity changed, otherwise rewording.
The meaning guard of Rewrite and this diff are one module: `meaning_changes` and `word_diff`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reqstudio.check.meaning import Change, describe, meaning_changes, render_word_diff, word_diff
from reqstudio.workspace.items import Item, ItemSet

# two texts are the same requirement reworded when this share of their content words is shared
SIMILAR = 0.5


@dataclass
class ItemChange:
    """One difference: its status ("added", "removed", "changed", "moved"; a changed item that
    also moved is "changed" with `moved` set), the item before and after."""

    status: str
    old: Item | None
    new: Item | None
    moved: bool = False
    matched_by: str = ""  # "id", "text", "similarity"
    meaning: list[Change] = field(default_factory=list)
    attributes: dict[str, tuple[object, object]] = field(default_factory=dict)

    @property
    def id(self) -> str:
        item = self.new or self.old
        return item.id if item else ""

    @property
    def text_changed(self) -> bool:
        return bool(self.old and self.new and self.old.text != self.new.text)

    def as_dict(self, language: str = "en") -> dict[str, object]:
        data: dict[str, object] = {
            "status": self.status,
            "id": self.id,
            "old_id": self.old.id if self.old else None,
            "new_id": self.new.id if self.new else None,
            "matched_by": self.matched_by or None,
            "moved": self.moved,
            "old_section": self.old.section if self.old else None,
            "new_section": self.new.section if self.new else None,
            "old_text": self.old.text if self.old else None,
            "new_text": self.new.text if self.new else None,
        }
        if self.text_changed:
            data["word_diff"] = render_word_diff((self.old.text, self.new.text))
            data["words"] = [
                {"op": op.tag, "old": op.old, "new": op.new}
                for op in word_diff(self.old.text, self.new.text)
                if op.tag != "equal"
            ]
            data["meaning_changed"] = bool(self.meaning)
            data["meaning"] = [
                {**c.as_dict(), "description": describe(c, language)} for c in self.meaning
            ]
        if self.attributes:
            data["attributes"] = {
                name: {"old": old, "new": new} for name, (old, new) in self.attributes.items()
            }
        return data


@dataclass
class ItemDiff:
    changes: list[ItemChange]
    unchanged: int

    @property
    def differs(self) -> bool:
        return bool(self.changes)

    def counts(self) -> dict[str, int]:
        counts = {"added": 0, "removed": 0, "changed": 0, "moved": 0, "meaning_changed": 0}
        for change in self.changes:
            counts[change.status] += 1
            if change.meaning:
                counts["meaning_changed"] += 1
        counts["unchanged"] = self.unchanged
        return counts


def _requirements(item_set: ItemSet) -> list[Item]:
    return [item for item in item_set.items if item.kind != "heading"]


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def match_items(old: list[Item], new: list[Item]) -> list[tuple[Item, Item, str]]:
    """The pairs of the same requirement in `old` and `new`, and how each was matched."""
    from reqstudio.check.trace import content_words

    pairs: list[tuple[Item, Item, str]] = []
    left, right = list(old), list(new)
    by_id: dict[str, list[Item]] = {}
    for item in right:
        if item.id_kept:
            by_id.setdefault(item.id, []).append(item)
    for item in list(left):
        candidates = by_id.get(item.id) if item.id_kept else None
        if candidates:
            other = candidates.pop(0)
            pairs.append((item, other, "id"))
            left.remove(item)
            right.remove(other)
    for item in list(left):
        other = next((o for o in right if o.text.strip() == item.text.strip()), None)
        if other is not None:
            pairs.append((item, other, "text"))
            left.remove(item)
            right.remove(other)
    scored = []
    for a in left:
        words_a = content_words(a.text)
        for b in right:
            score = _jaccard(words_a, content_words(b.text))
            if score >= SIMILAR:
                scored.append((score, a, b))
    scored.sort(key=lambda entry: -entry[0])
    taken: set[int] = set()
    for _, a, b in scored:
        if id(a) in taken or id(b) in taken:
            continue
        taken |= {id(a), id(b)}
        pairs.append((a, b, "similarity"))
    return pairs


def diff_items(old_set: ItemSet, new_set: ItemSet) -> ItemDiff:
    """What changed from `old_set` to `new_set`, in the new version's order (removed items
    after)."""
    old, new = _requirements(old_set), _requirements(new_set)
    pairs = match_items(old, new)
    matched_new = {id(b): (a, how) for a, b, how in pairs}
    matched_old = {id(a) for a, _, _ in pairs}
    changes: list[ItemChange] = []
    unchanged = 0
    for item in new:
        found = matched_new.get(id(item))
        if found is None:
            changes.append(ItemChange("added", None, item))
            continue
        before, how = found
        moved = before.section[1:] != item.section[1:]
        attributes = {
            name: (before.attributes.get(name), item.attributes.get(name))
            for name in dict.fromkeys([*before.attributes, *item.attributes])
            if before.attributes.get(name) != item.attributes.get(name)
        }
        text_changed = before.text != item.text
        if not (text_changed or attributes or moved or before.kind != item.kind):
            unchanged += 1
            continue
        status = "changed" if text_changed or attributes or before.kind != item.kind else "moved"
        meaning = meaning_changes(before.text, item.text) if text_changed else []
        changes.append(ItemChange(status, before, item, moved, how, meaning, attributes))
    for item in old:
        if id(item) not in matched_old:
            changes.append(ItemChange("removed", item, None))
    return ItemDiff(changes, unchanged)
