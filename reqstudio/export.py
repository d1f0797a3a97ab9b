"""Generated documents as Word files.

A Markdown document (an SRS, an improved or a rewritten document) becomes a .docx with its
headings, lists and tables kept, by pandoc (the PyPI package `pypandoc_binary` carries the
pandoc executable, so nothing has to be installed by hand). Pandoc reads GitHub-flavoured
Markdown, pipe tables included, and writes Word's own styles ("Heading 1", tables, numbered
and bulleted lists), which a hand-written python-docx walker would have to re-create one
construct at a time.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

DOCX_MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


class ExportError(RuntimeError):
    """The document could not be converted; the message says why, in one line."""


# At most this long for one conversion (a few hundred ms for a long SRS): pandoc runs as a
# child process, which a wait without a bound would leave a run waiting on for ever.
DOCX_TIMEOUT_S = 60.0


def markdown_to_docx(markdown: str, timeout: float = DOCX_TIMEOUT_S) -> bytes:
    """The Markdown document as the bytes of a .docx file (pandoc, at most `timeout` s)."""
    import pypandoc

    with tempfile.TemporaryDirectory(prefix="reqstudio-docx-") as folder:
        target = Path(folder) / "document.docx"
        try:
            # pypandoc's own conversion waits for pandoc without a bound; its executable is
            # run here the same way (gfm in, docx out, standalone), with one.
            done = subprocess.run(
                [pypandoc.get_pandoc_path(), "--from", "gfm", "--to", "docx", "--standalone",
                 "--output", str(target)],
                input=markdown.encode("utf-8"), capture_output=True, timeout=timeout,
            )  # fmt: skip
        except subprocess.TimeoutExpired:
            raise ExportError(f"cannot write the .docx: pandoc took over {timeout:g} s") from None
        except OSError as error:
            raise ExportError(f"cannot write the .docx: {error}") from error
        if done.returncode != 0:
            said = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise ExportError(
                f"cannot write the .docx: {said[0] if said else f'pandoc exit {done.returncode}'}"
            )
        return target.read_bytes()


def docx_name(markdown_name: str) -> str:
    """`srs.md` → `srs.docx`; a name without .md gets .docx added."""
    stem = markdown_name[:-3] if markdown_name.lower().endswith(".md") else markdown_name
    return f"{stem}.docx"
