"""The page the browser loads names no other site.

Chainlit's `index.html` links the Inter font from fonts.googleapis.com and KaTeX's stylesheet
from a CDN. Offline (the embedded default) both fail and the browser logs two console
errors; online they tell those sites who opened the app. ReqStudio has LaTeX off
(`.chainlit/config.toml`), so KaTeX's stylesheet has nothing to style, and its own
stylesheet names a font stack of local fonts (Noto, the Debian CJK fonts the README installs).
So every `<link>` to another origin is taken out of the page Chainlit serves.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# a <link ...> element whose href is absolute (another origin): stylesheets and preconnects
_FOREIGN_LINK = re.compile(r"[ \t]*<link\b[^>]*?\bhref=\"(?:https?:)?//[^\"]*\"[^>]*>\n?", re.S)


def without_foreign_links(html: str) -> str:
    """The page with every link to another origin removed."""
    return _FOREIGN_LINK.sub("", html)


def page_without_other_sites(original: Callable[[str], str]) -> Callable[[str], str]:
    """Chainlit's page template `original` without links to other origins (put in its place
    by reqstudio/web/chainlit_seam.py)."""

    def page(root_path: str) -> str:
        return without_foreign_links(original(root_path))

    page.reqstudio_offline = True  # type: ignore[attr-defined]
    return page
