"""The documentation site builds with MkDocs Material in strict mode: every page in the nav,
every link and every anchor resolves (a warning fails the build, and this test). The README's
links into docs/ point at pages and headings that exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
         "--site-dir", str(site)],
        cwd=config.parent, capture_output=True, text=True, encoding="utf-8", timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    site = tmp_path_factory.mktemp("site")
    done = build(ROOT / "mkdocs.yml", site)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "WARNING" not in done.stderr, done.stderr[-3000:]
    return site


def test_the_site_builds_in_strict_mode_with_every_page(site):
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["strict"] is True and config["validation"]["anchors"] == "warn"

    def pages(nav):
        for entry in nav:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            yield from pages(value) if isinstance(value, list) else [value]

    for page in pages(config["nav"]):
        built = site / ("index.html" if page == "index.md" else f"{page[:-3]}/index.html")
        assert built.is_file(), page
    # the measured figures are served beside the pages that quote them
    assert (site / "results" / "load" / "index.html").is_file()
    assert (site / "results" / "startup.json").is_file()


def test_a_broken_anchor_fails_the_build_with_these_settings(tmp_path):
    """Strict mode with the project's validation settings refuses a link to a heading that
    does not exist; without `anchors: warn` MkDocs would only log it."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config.pop("hooks"), config.pop("exclude_docs"), config.pop("not_in_nav")
    config["nav"] = ["index.md", "other.md"]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [it](other.md#no-such-heading).\n")
    (docs / "other.md").write_text("# Other\n\n## A heading\n")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "no-such-heading" in done.stderr


def test_the_readme_links_into_the_docs_resolve(site):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\((docs/[^)#]+)(?:#([^)]+))?\)", readme)
    assert len(links) >= 15
    for path, anchor in links:
        assert (ROOT / path).is_file(), path
        if path.endswith(".md") and anchor:
            page = path.removeprefix("docs/")[:-3]
            html = (site / ("" if page == "index" else page) / "index.html").read_text("utf-8")
            assert f'id="{anchor}"' in html, (path, anchor)
    for path in re.findall(r"\]\(([A-Z]+\.md)\)", readme):
        assert (ROOT / path).is_file(), path
