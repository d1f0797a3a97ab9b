"""Generated documents as Word files.

A Markdown document (an SRS, an improved or a rewritten document) becomes a .docx with its
headings, lists and tables kept, by pandoc (the PyPI package `pypandoc_binary` carries the
pandoc executable, so nothing has to be installed by hand). Pandoc reads GitHub-flavoured
Markdown, pipe tables included, and writes Word's own styles ("Heading 1", tables, numbered
and bulleted lists), which a hand-written python-docx walker would have to re-create one
construct at a time.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

DOCX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


class ExportError(RuntimeError):
    """The document could not be converted; the message says why, in one line."""


def markdown_to_docx(markdown: str) -> bytes:
    """The Markdown document as the bytes of a .docx file."""
    import pypandoc

    with tempfile.TemporaryDirectory(prefix="reqstudio-docx-") as folder:
        target = Path(folder) / "document.docx"
        try:
            pypandoc.convert_text(
                markdown,
                "docx",
                format="gfm",
                outputfile=str(target),
                extra_args=["--standalone"],
            )
        except (OSError, RuntimeError) as error:
            first = (
                str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            )
            raise ExportError(f"cannot write the .docx: {first}") from error
        return target.read_bytes()


def docx_name(markdown_name: str) -> str:
    """`srs.md` → `srs.docx`; a name without .md gets .docx added."""
    stem = markdown_name[:-3] if markdown_name.lower().endswith(".md") else markdown_name
    return f"{stem}.docx"
