"""A diff of two versions of requirements said as a table for the terminal, as Markdown, or as
JSON (`reqstudio diff`)."""

from __future__ import annotations

import json

from reqstudio.check.meaning import describe, render_word_diff
from reqstudio.workspace.diff import ItemChange, ItemDiff

_WORDS = {
    "en": {
        "added": "added",
        "removed": "removed",
        "changed": "changed",
        "moved": "moved",
        "meaning": "meaning",
        "rewording": "rewording",
        "none": "No differences.",
        "moved_to": "moved: {old} -> {new}",
        "attribute": "{name}: {old} -> {new}",
        "summary": "{added} added, {removed} removed, {changed} changed ({meaning_changed} in "
        "meaning), {moved} moved, {unchanged} unchanged",
        "head": ("status", "id", "kind of change", "change"),
    },
    "zh": {
        "added": "新增",
        "removed": "删除",
        "changed": "修改",
        "moved": "移动",
        "meaning": "含义改变",
        "rewording": "措辞改变",
        "none": "没有差异。",
        "moved_to": "移动：{old} → {new}",
        "attribute": "{name}：{old} → {new}",
        "summary": "新增 {added}，删除 {removed}，修改 {changed}（含义改变 {meaning_changed}），"
        "移动 {moved}，未变 {unchanged}",
        "head": ("状态", "编号", "变化类别", "变化"),
    },
}


def _path(section: list[str]) -> str:
    return " / ".join(section[1:]) or "-"


def _details(change: ItemChange, language: str) -> tuple[str, list[str]]:
    """The change's kind ("meaning", "rewording", or "") and its lines."""
    words = _WORDS[language]
    lines: list[str] = []
    kind = ""
    if change.status == "added":
        lines.append(change.new.text)
    elif change.status == "removed":
        lines.append(change.old.text)
    else:
        if change.text_changed:
            kind = words["meaning"] if change.meaning else words["rewording"]
            lines.append(render_word_diff((change.old.text, change.new.text)))
            lines += [describe(c, language) for c in change.meaning]
        for name, (old, new) in change.attributes.items():
            kind = kind or words["changed"]
            lines.append(words["attribute"].format(name=name, old=old or "-", new=new or "-"))
        if change.moved:
            lines.append(
                words["moved_to"].format(
                    old=_path(change.old.section), new=_path(change.new.section)
                )
            )
    return kind, lines


def render_table(diff: ItemDiff, language: str = "en") -> str:
    words = _WORDS[language]
    if not diff.changes:
        return words["none"] + "\n" + words["summary"].format(**diff.counts())
    rows = []
    for change in diff.changes:
        kind, lines = _details(change, language)
        rows.append((words[change.status], change.id, kind, lines))
    widths = [max(len(words["head"][n]), *(len(str(row[n])) for row in rows)) for n in range(3)]
    out = ["  ".join(h.ljust(w) for h, w in zip(words["head"], widths, strict=False)).rstrip()]
    indent = " " * (sum(widths) + 6)
    for status, item_id, kind, lines in rows:
        first = f"{status.ljust(widths[0])}  {item_id.ljust(widths[1])}  {kind.ljust(widths[2])}  "
        out.append(first + (lines[0] if lines else ""))
        out += [indent + line for line in lines[1:]]
    out.append(words["summary"].format(**diff.counts()))
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def render_markdown(diff: ItemDiff, language: str = "en") -> str:
    words = _WORDS[language]
    head = words["head"]
    out = [f"| {head[0]} | {head[1]} | {head[2]} | {head[3]} |", "|---|---|---|---|"]
    for change in diff.changes:
        kind, lines = _details(change, language)
        out.append(
            f"| {words[change.status]} | {_cell(change.id)} | {_cell(kind)} | "
            f"{'<br>'.join(_cell(line) for line in lines)} |"
        )
    summary = words["summary"].format(**diff.counts())
    if not diff.changes:
        return f"{words['none']}\n\n{summary}\n"
    return "\n".join(out) + f"\n\n{summary}\n"


def render_json(
    diff: ItemDiff, old: str, new: str, language: str = "en", extra: dict | None = None
) -> str:
    """The diff as JSON; `extra`: more keys (the tests of changed requirements)."""
    data = {
        "old": old,
        "new": new,
        "differs": diff.differs,
        "summary": diff.counts(),
        "changes": [change.as_dict(language) for change in diff.changes],
        **(extra or {}),
    }
    return json.dumps(data, ensure_ascii=False, indent=2)
