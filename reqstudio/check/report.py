"""The checker's report as text: a summary line and a table of findings per section, in the
reader's language (`check_report.*` in the message catalogue)."""

from __future__ import annotations

from reqstudio.check.engine import CheckReport, cross_message
from reqstudio.messages import language_code, text


def _said(key: str, language: str, **values: object) -> str:
    return text(f"check_report.{key}", language, **values)


def _trace_part(s: dict, language: str) -> str:
    trace = s.get("trace")
    if not trace:
        return ""
    total = trace["request_sentences"]
    return _said("trace", language, traced=total - len(trace["untraced"]), total=total)


def _suppressed_part(s: dict, language: str) -> str:
    count = s.get("suppressed", 0)
    return _said("suppressed", language, count=count) if count else ""


def summary_line(report: CheckReport, language: str = "en") -> str:
    s = report.summary()
    ears = s["ears"]
    traced = _trace_part(s, language) + _suppressed_part(s, language)
    if not s["requirements"]:
        return _said("none", language) + traced
    cross = s["cross_requirement"]["findings"]
    return _said(
        "summary",
        language,
        requirements=s["requirements"],
        with_findings=s["with_findings"],
        findings=s["findings"],
        score=s["score"],
        matched=ears["matched"],
        templates=", ".join(f"{k} {v}" for k, v in ears["by_template"].items()) or "-",
        traced=traced,
        across=_said("across", language, count=cross) if cross else "",
    )


def _header(language: str) -> tuple[str, str, str, str]:
    return tuple(
        _said(f"col_{name}", language) for name in ("requirement", "line", "rule", "message")
    )  # type: ignore[return-value]


def _cross_rows(report: CheckReport, language: str) -> list[tuple[str, str, str, str]]:
    """(requirements, lines, rule, message) of each finding across requirements."""
    return [
        (
            " / ".join(f.requirement_ids),
            " / ".join(str(r.line) for r in f.requirements),
            f.rule,
            cross_message(f, language_code(language)),
        )
        for f in report.cross
    ]


def _suppressed_rows(report: CheckReport, language: str) -> list[tuple[str, str, str, str]]:
    """(requirement, line, rule, message and the verdict's reason) of each dismissed finding."""
    rows = []
    for s in report.suppressed:
        f, reason = s.finding, s.verdict.reason
        message = f.message_in(language)
        if reason:
            message += _said("reason", language, reason=reason)
        rows.append((f.requirement_id or "-", str(f.line or "-"), f.rule, message))
    return rows


def render_text(report: CheckReport, language: str = "en", show_suppressed: bool = False) -> str:
    """The findings as a table, one block per section, then the summary line; with
    `show_suppressed`, also the findings a verdict dismissed."""
    header = _header(language)
    rows_by_section: dict[str, list[tuple[str, str, str, str]]] = {}
    for f in report.findings:
        section = f.section or _said("whole_document_text", language)
        rows_by_section.setdefault(section, []).append(
            (f.requirement_id or "-", str(f.line or "-"), f.rule, f.message_in(language))
        )
    if report.cross:
        rows_by_section[_said("cross_section", language)] = _cross_rows(report, language)
    if show_suppressed and report.suppressed:
        rows_by_section[_said("suppressed_section", language)] = _suppressed_rows(report, language)
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
    header = "| " + " | ".join(_header(language)) + " |"
    sections: dict[str, list[str]] = {}
    for f in report.findings:
        section = f.section or _said("whole_document", language)
        sections.setdefault(section, []).append(
            f"| {_cell(f.requirement_id or '-')} | {f.line or '-'} | `{f.rule}` "
            f"| {_cell(f.message_in(language))} |"
        )
    if report.cross:
        sections[_said("cross_section", language)] = [
            f"| {_cell(ids)} | {lines} | `{rule}` | {_cell(message)} |"
            for ids, lines, rule, message in _cross_rows(report, language)
        ]
    if show_suppressed and report.suppressed:
        sections[_said("suppressed_section", language)] = [
            f"| {_cell(rid)} | {line} | `{rule}` | {_cell(message)} |"
            for rid, line, rule, message in _suppressed_rows(report, language)
        ]
    parts = []
    for section, rows in sections.items():
        parts += [f"#### {_cell(section)}", "", header, "|---|---|---|---|", *rows, ""]
    parts.append(summary_line(report, language))
    return "\n".join(parts)
