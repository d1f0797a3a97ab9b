"""The buttons to the thread's project's acceptance tests, made in one place so that any view
can offer them (a project chosen, a document frozen, a ReqIF file stored) without importing
what they do: their callbacks are in `reqstudio.web.acceptance_view` (show, confirm) and
`reqstudio.web.acceptance_generate` (write tests)."""

from __future__ import annotations

import chainlit as cl

from reqstudio.web.texts import Catalog

SHOW, CONFIRM, GENERATE = "tests_show", "tests_confirm", "tests_generate"

tr = Catalog("acceptance")


def show_action() -> cl.Action:
    """The button that shows the thread's project's tests and matrix."""
    return cl.Action(name=SHOW, payload={}, label=tr("show"), icon="table")


def generate_action() -> cl.Action:
    """The button that writes tests for the project's requirements without any."""
    return cl.Action(name=GENERATE, payload={}, label=tr("generate"), icon="wand-sparkles")
