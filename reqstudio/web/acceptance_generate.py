"""Writing acceptance tests in the browser: the acceptance-test writer (the model role
`AcceptanceWriter`, `reqstudio.workspace.acceptance_writer`, the call path `reqstudio tests
generate` takes) writes Given/When/Then scenarios for the requirements of the thread's project
that have no test yet, with the thread's model; the tests are stored in the project and the
matrix is shown again. A call whose answers could not be used (after the role's re-asks)
leaves its requirements without tests, named with why; the tests written are kept."""

from __future__ import annotations

import asyncio

import chainlit as cl

from reqstudio.errors import describe_failure
from reqstudio.web.acceptance_view import project_tests, show_tests
from reqstudio.web.projects import project_label, say_refused
from reqstudio.web.session import button_action, finish_step, open_top_level_step
from reqstudio.web.texts import Catalog, counted, lang
from reqstudio.web.workspace_buttons import GENERATE
from reqstudio.workspace.store import WorkspaceError

IDS_IN_TITLE = 6

tr = Catalog("acceptance")


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:IDS_IN_TITLE])
    return shown + (", …" if len(ids) > IDS_IN_TITLE else "")


@button_action(GENERATE)
async def on_generate(action: cl.Action) -> None:
    await generate_tests()


async def generate_tests() -> None:
    from reqstudio.web.settings_panel import thread_factory
    from reqstudio.workspace.acceptance import verifiable
    from reqstudio.workspace.acceptance_writer import write_tests

    opened = await project_tests()
    if opened is None:
        return
    project, tests = opened
    try:
        items = await tests.store.items(project)
        existing = await tests.tests(project)
    except WorkspaceError as error:
        await say_refused("acceptance tests refused", error)
        return
    label = project_label(project)
    requirements = verifiable(items)
    if not requirements:
        await cl.Message(content=tr("no_requirements", project=label)).send()
        return
    covered = {t.requirement_uid for t in existing}
    chosen = [r for r in requirements if r.uid not in covered]
    if not chosen:
        await cl.Message(content=tr("nothing_to_write", project=label)).send()
        return
    language = lang()
    step = await open_top_level_step(
        tr("writing", requirements=_ids([r.id for r in chosen])), "llm"
    )
    try:
        written = await write_tests(
            thread_factory(), chosen, language, taken={t.id for t in existing}
        )
    except asyncio.CancelledError:
        await finish_step(step, "stopped")
        raise
    lines = [
        tr("failed_batch", requirements=", ".join(f.requirement_ids),
           reason=describe_failure(f.error, language))
        for f in written.failures
    ]  # fmt: skip
    asked = ", ".join(r.id for r in chosen)  # the step: what was asked; the message: the outcome
    if not written.tests:
        await finish_step(step, "failed", output=asked)
        await cl.Message(content="\n\n".join([tr("none_written"), *lines])).send()
        return
    try:
        await tests.add(project, written.tests)
    except WorkspaceError as error:
        await finish_step(step, "failed", output=asked)
        await say_refused("acceptance tests not stored", error)
        return
    done = tr(
        "written",
        tests=counted(len(written.tests), "test"),
        covered=len({t.requirement_uid for t in written.tests}),
        asked=counted(written.asked, "requirement"),
        project=label,
    )
    await finish_step(step, "done" if written.complete else "failed", output=asked)
    await cl.Message(content="\n\n".join([done, *lines])).send()
    await show_tests(project)
