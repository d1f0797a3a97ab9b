"""First load offline: the page asks no other site for anything and the browser logs no error;
the tab and the header show ReqStudio's icon and logo, not Chainlit's."""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Request, Route, expect

from tests.apps import AppProcess
from tests.browser_support import _PAGES, watch_page

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_first_load_asks_no_other_site_and_logs_no_error(
    browser: Browser, app: AppProcess, output_dir: Path, locale: str
):
    context = browser.new_context(locale=locale, viewport={"width": 1280, "height": 860})
    foreign: list[str] = []

    def only_the_app(route: Route, request: Request) -> None:
        if request.url.startswith(app.url) or request.url.startswith(("data:", "blob:")):
            route.continue_()
        else:  # offline, as for a newcomer without a network: the request fails
            foreign.append(request.url)
            route.abort()

    context.route("**/*", only_the_app)
    page = context.new_page()
    _PAGES.append(page)
    watch_page(page, app.url)
    console_errors: list[str] = []
    page.on("console", lambda m: m.type == "error" and console_errors.append(m.text))
    page.goto(app.url)
    expect(page.locator("#chat-input")).to_be_visible(timeout=60_000)
    page.wait_for_load_state("networkidle", timeout=60_000)

    assert foreign == []
    assert console_errors == []
    icon = page.locator('link[rel="icon"]')
    assert icon.get_attribute("href") == "/favicon"
    logo = page.locator('img[src*="/logo"]').first
    expect(logo).to_be_visible()
    assert logo.evaluate("img => img.complete && img.naturalWidth > 0")
    page.screenshot(path=output_dir / f"first-load-{locale}.png")
    context.close()


@pytest.mark.parametrize("path", ["/favicon", "/logo?theme=light", "/logo?theme=dark"])
def test_icon_and_logo_are_reqstudio_s(app: AppProcess, path: str):
    with urllib.request.urlopen(app.url + path, timeout=30) as answer:
        body = answer.read().decode("utf-8")
        assert answer.headers["Content-Type"].startswith("image/svg+xml")
    assert "<title>ReqStudio</title>" in body
