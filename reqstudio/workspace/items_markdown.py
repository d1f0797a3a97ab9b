"""Items written back as a Markdown document: what a mode reads when the user gives it a ReqIF
file (Review, Rewrite and SRS work on documents). The headings come from the items' section
paths, each requirement is a list item that starts with its id, so the document parser
(`reqstudio.workspace.items.items_from_text`, the checker's) finds the same ids again."""

from __future__ import annotations

from reqstudio.workspace.items import ItemSet

MAX_LEVEL = 6


def _heading(level: int, title: str) -> str:
    return "#" * min(level, MAX_LEVEL) + " " + " ".join(title.split())


def items_markdown(item_set: ItemSet, title: str = "") -> str:
    """The items as Markdown: the document's title (the first element of the section paths,
    else `title`) as `#`, each deeper section a deeper heading, a requirement as
    `- ID text` (its further lines indented under it), information as a paragraph."""
    lines: list[str] = []
    shown: list[str] = []  # the heading path written so far
    first = next((item.section[0] for item in item_set.items if item.section), "")
    doc_title = first or title or item_set.title or "Document"
    lines.append(_heading(1, doc_title))
    shown = [doc_title]
    for item in item_set.items:
        path = list(item.section) or [doc_title]
        if item.kind == "heading":
            path = [*path, item.text]
        common = 0
        while common < min(len(path), len(shown)) and path[common] == shown[common]:
            common += 1
        for level in range(max(common, 1), len(path)):
            lines += ["", _heading(level + 1, path[level])]
        shown = path
        if item.kind == "heading":
            continue
        text_lines = [line.rstrip() for line in item.text.strip().splitlines() if line.strip()]
        if not text_lines:
            continue
        lines.append("")
        if item.kind == "information":  # not a requirement: no id that would make it one
            lines += text_lines
            continue
        head = f"- {item.id} {text_lines[0]}" if item.id else f"- {text_lines[0]}"
        lines.append(head)
        lines += ["  " + line for line in text_lines[1:]]
    return "\n".join(lines).strip() + "\n"
