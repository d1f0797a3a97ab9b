"""The checker's report as text: a summary line and a table of findings per section."""

from __future__ import annotations

from reqstudio.check.engine import CheckReport, cross_message

# the heading of the findings across requirements: found by rules, conflicts included, with
# no model asked to confirm them
CROSS_SECTION = {
    "en": "Across requirements (rules; conflicts not confirmed by a model)",
    "zh": "跨需求检查（规则发现；矛盾未经模型确认）",
}


def _trace_part(s: dict, zh: bool) -> str:
    trace = s.get("trace")
    if not trace:
        return ""
    total = trace["request_sentences"]
    traced = total - len(trace["untraced"])
    return (
        f"；需求描述 {total} 句，{traced} 句有需求可追溯"
        if zh
        else (f"; request: {traced}/{total} sentences traced")
    )


def _suppressed_part(s: dict, zh: bool) -> str:
    count = s.get("suppressed", 0)
    if not count:
        return ""
    return f"；{count} 个问题已按判定隐藏" if zh else f"; {count} suppressed by verdicts"


def summary_line(report: CheckReport, language: str = "en") -> str:
    s = report.summary()
    ears = s["ears"]
    zh = language == "zh"
    traced = _trace_part(s, zh) + _suppressed_part(s, zh)
    if not s["requirements"]:
        return ("没有找到需求" if zh else "no requirements found") + traced
    templates = ", ".join(f"{k} {v}" for k, v in ears["by_template"].items()) or "-"
    cross = s["cross_requirement"]["findings"]
    if zh:
        across = f"；跨需求问题 {cross} 个" if cross else ""
        return (
            f"{s['requirements']} 条需求，{s['with_findings']} 条有问题，共 {s['findings']} 个问题，"
            f"得分 {s['score']:.2f}；符合 EARS 模板 {ears['matched']}/{s['requirements']}"
            f"（{templates}）{traced}{across}"
        )
    across = f"; across requirements: {cross} findings" if cross else ""
    return (
        f"{s['requirements']} requirements, {s['with_findings']} with findings, "
        f"{s['findings']} findings, score {s['score']:.2f}; EARS: {ears['matched']}/"
        f"{s['requirements']} match ({templates}){traced}{across}"
    )


def _cross_rows(report: CheckReport, zh: bool) -> list[tuple[str, str, str, str]]:
    """(requirements, lines, rule, message) of each finding across requirements."""
    return [
        (
            " / ".join(f.requirement_ids),
            " / ".join(str(r.line) for r in f.requirements),
            f.rule,
            cross_message(f, "zh" if zh else "en"),
        )
        for f in report.cross
    ]


SUPPRESSED_SECTION = {"en": "Suppressed by verdicts", "zh": "按判定隐藏的问题"}


def _suppressed_rows(report: CheckReport, zh: bool) -> list[tuple[str, str, str, str]]:
    """(requirement, line, rule, message and the verdict's reason) of each dismissed finding."""
    rows = []
    for s in report.suppressed:
        f, reason = s.finding, s.verdict.reason
        message = f.message_zh if zh else f.message
        if reason:
            message += f"（理由：{reason}）" if zh else f" (reason: {reason})"
        rows.append((f.requirement_id or "-", str(f.line or "-"), f.rule, message))
    return rows


def render_text(report: CheckReport, language: str = "en", show_suppressed: bool = False) -> str:
    """The findings as a table, one block per section, then the summary line; with
    `show_suppressed`, also the findings a verdict dismissed."""
    zh = language == "zh"
    header = ("需求", "行", "规则", "说明") if zh else ("requirement", "line", "rule", "message")
    rows_by_section: dict[str, list[tuple[str, str, str, str]]] = {}
    for f in report.findings:
        section = f.section or ("（整个文档）" if zh else "(whole document)")
        rows_by_section.setdefault(section, []).append(
            (f.requirement_id or "-", str(f.line or "-"), f.rule, f.message_zh if zh else f.message)
        )
    if report.cross:
        rows_by_section[CROSS_SECTION["zh" if zh else "en"]] = _cross_rows(report, zh)
    if show_suppressed and report.suppressed:
        rows_by_section[SUPPRESSED_SECTION["zh" if zh else "en"]] = _suppressed_rows(report, zh)
    out = []
    for section, rows in rows_by_section.items():
        widths = [max(len(r[i]) for r in [*rows, header]) for i in range(3)]
        out.append(f"## {section}")
        out.append("  ".join(h.ljust(w) for h, w in zip(header, [*widths, 0], strict=False)))
        for row in rows:
            cells = [c.ljust(w) for c, w in zip(row[:3], widths, strict=True)]
            out.append("  ".join([*cells, row[3]]))
        out.append("")
    out.append(summary_line(report, language))
    return "\n".join(out)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_tables(
    report: CheckReport, language: str = "en", show_suppressed: bool = False
) -> str:
    """The findings as Markdown, one table per section under a `####` heading, then the
    summary line: what a chat UI shows for a generated SRS or an uploaded document (with
    `show_suppressed`, also the findings a verdict dismissed)."""
    zh = language == "zh"
    header = "| 需求 | 行 | 规则 | 说明 |" if zh else "| requirement | line | rule | message |"
    sections: dict[str, list[str]] = {}
    for f in report.findings:
        section = f.section or ("整个文档" if zh else "whole document")
        message = f.message_zh if zh else f.message
        sections.setdefault(section, []).append(
            f"| {_cell(f.requirement_id or '-')} | {f.line or '-'} | `{f.rule}` | {_cell(message)} |"
        )
    if report.cross:
        sections[CROSS_SECTION["zh" if zh else "en"]] = [
            f"| {_cell(ids)} | {lines} | `{rule}` | {_cell(message)} |"
            for ids, lines, rule, message in _cross_rows(report, zh)
        ]
    if show_suppressed and report.suppressed:
        sections[SUPPRESSED_SECTION["zh" if zh else "en"]] = [
            f"| {_cell(rid)} | {line} | `{rule}` | {_cell(message)} |"
            for rid, line, rule, message in _suppressed_rows(report, zh)
        ]
    parts = []
    for section, rows in sections.items():
        parts += [f"#### {_cell(section)}", "", header, "|---|---|---|---|", *rows, ""]
    parts.append(summary_line(report, language))
    return "\n".join(parts)
