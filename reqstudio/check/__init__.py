"""The requirements checker: deterministic rules (ISO/IEC/IEEE 29148 requirements language,
INCOSE Guide for Writing Requirements, structure, EARS templates) that need no model.
Names are imported on first use (`reqstudio.lazy`)."""

from reqstudio.lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "reqstudio.check.engine": ("CheckReport", "Finding", "check_document"),
        "reqstudio.check.ears": ("ears_template",),
        "reqstudio.check.parse": ("Requirement", "parse_requirements"),
        "reqstudio.check.report": ("markdown_tables", "render_text", "summary_line"),
    },
)
