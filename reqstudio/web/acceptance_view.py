"""The thread's project's acceptance tests in the browser (the tests of `reqstudio tests`): the
traceability matrix both ways (each requirement with its tests, those without tests named;
each test with the requirement it verifies and its state), the scenarios in a folded step,
and the suspect tests, each with why (its requirement's text then and now) and a button to
confirm it: a person's word that it still verifies its requirement as it now reads.

Every word on screen is the catalogue's (`acceptance.*`), the ids and texts are the project's.
Every read and the confirmation go through `WorkspaceStore` / `AcceptanceTests` on the thread's
project of the signed-in user, which refuse a thread or project that is not theirs."""

from __future__ import annotations

from typing import TYPE_CHECKING

import chainlit as cl

from reqstudio.web.projects import (
    owner,
    project_label,
    say_refused,
    thread_project,
    workspace_store,
)
from reqstudio.web.session import button_action, send_finished_step
from reqstudio.web.texts import Catalog
from reqstudio.web.workspace_buttons import CONFIRM, SHOW, generate_action
from reqstudio.workspace.acceptance import AcceptanceTest
from reqstudio.workspace.acceptance_out import Matrix, build_matrix
from reqstudio.workspace.store import Project, WorkspaceError

if TYPE_CHECKING:
    from reqstudio.workspace.acceptance_store import AcceptanceTests

MAX_CONFIRM_BUTTONS = 20
TEXT_SHOWN = 120  # characters of a requirement's text in the matrix
IDS_NAMED = 50  # the requirements without tests named in one line
ROWS_SHOWN = 200  # rows of each table (the rest: `reqstudio tests matrix`)

tr = Catalog("acceptance")


def _cell(text: str) -> str:
    """Text in a table cell, as written (no Markdown of its own, no line breaks)."""
    text = " ".join(text.split())
    for mark in ("\\", "|", "`", "*", "_", "<", "[", "]"):
        text = text.replace(mark, "\\" + mark)
    return text


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TEXT_SHOWN else text[: TEXT_SHOWN - 1] + "…"


def _state(test: AcceptanceTest) -> str:
    return tr("state_suspect") if test.suspect is not None else tr("state_ok")


def matrix_markdown(matrix: Matrix, project: str) -> str:
    """The matrix as two tables and the summary, in the user's language."""
    counts = matrix.counts()
    out = [f"**{tr('title', project=project)}**", "", tr("summary", **counts)]
    if counts["orphaned"]:
        out.append(tr("orphaned", count=counts["orphaned"]))
    without = [r.id for r, tests in matrix.requirements if not tests]
    if without:
        ids = ", ".join(without[:IDS_NAMED]) + (", …" if len(without) > IDS_NAMED else "")
        out += ["", tr("without_tests", ids=ids)]
    out += ["", f"**{tr('by_requirement')}**", "",
            f"| {tr('column_requirement')} | {tr('column_text')} | {tr('column_tests')} |",
            "|---|---|---|"]  # fmt: skip
    for requirement, tests in matrix.requirements[:ROWS_SHOWN]:
        names = ", ".join(
            t.id + (f" ({tr('state_suspect')})" if t.suspect is not None else "") for t in tests
        )
        out.append(f"| {_cell(requirement.id)} | {_cell(_short(requirement.text))} | "
                   f"{_cell(names) if tests else tr('no_tests')} |")  # fmt: skip
    if (more := len(matrix.requirements) - ROWS_SHOWN) > 0:
        out += ["", tr("more_rows", count=more)]
    if matrix.tests:
        out += ["", f"**{tr('by_test')}**", "",
                f"| {tr('column_test')} | {tr('column_title')} | {tr('column_verifies')} | "
                f"{tr('column_state')} |", "|---|---|---|---|"]  # fmt: skip
        for test, requirement in matrix.tests[:ROWS_SHOWN]:
            verifies = (
                requirement.id if requirement is not None else tr("gone", id=test.requirement_id)
            )
            out.append(f"| {_cell(test.id)} | {_cell(test.title)} | {_cell(verifies)} | "
                       f"{_state(test)} |")  # fmt: skip
        if (more := len(matrix.tests) - ROWS_SHOWN) > 0:
            out += ["", tr("more_rows", count=more)]
    return "\n".join(out)


def scenarios_markdown(tests: list[AcceptanceTest]) -> str:
    """Each test's Given/When/Then, the keywords in the user's language."""
    blocks = []
    for test in tests:
        lines = [f"**{_cell(test.id)}** · {_cell(test.title)}"]
        for key, text in (("given", test.given), ("when", test.when), ("then", test.then)):
            steps = [line.strip() for line in text.splitlines() if line.strip()]
            lines += [f"- {tr(key, text=_cell(step))}" for step in steps]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _change(test: AcceptanceTest) -> str:
    change = test.suspect.change if test.suspect is not None else "wording"
    return tr(
        f"change_{change}" if change in ("meaning", "wording", "removed") else "change_wording"
    )


def suspects_markdown(suspects: list[AcceptanceTest]) -> str:
    out = [tr("suspect_head")]
    for test in suspects:
        reason = test.suspect
        assert reason is not None
        out += ["", tr("suspect_line", test=_cell(test.id), title=_cell(test.title),
                       requirement=_cell(test.requirement_id), change=_change(test),
                       baseline=_cell(reason.baseline))]  # fmt: skip
        out.append(f"- {tr('was', text=_cell(reason.old_text))}")
        if reason.new_text is not None:
            out.append(f"- {tr('now', text=_cell(reason.new_text))}")
    return "\n".join(out)


async def project_or_refuse() -> Project | None:
    try:
        return await thread_project()
    except WorkspaceError as error:
        await say_refused("acceptance tests refused", error)
        return None


async def project_tests() -> tuple[Project, AcceptanceTests] | None:
    """The thread's project and the acceptance tests of the user's projects (through the
    app's store, `tests.store`); None when the project is refused (said)."""
    from reqstudio.workspace.acceptance_store import AcceptanceTests

    project = await project_or_refuse()
    if project is None:
        return None
    return project, AcceptanceTests(workspace_store())


async def show_tests(project: Project | None = None) -> None:
    """The matrix, the scenarios and the suspect tests of the thread's project."""
    from reqstudio.workspace.acceptance_store import AcceptanceTests

    project = project or await project_or_refuse()
    if project is None:
        return
    store = workspace_store()
    try:
        items = await store.items(project)
        tests = await AcceptanceTests(store).tests(project)
    except WorkspaceError as error:
        await say_refused("acceptance tests refused", error)
        return
    label = project_label(project)
    matrix = build_matrix(items, tests)
    if not matrix.requirements and not tests:
        await cl.Message(content=tr("no_requirements", project=label)).send()
        return
    actions = []
    if any(not t for _, t in matrix.requirements):
        actions.append(generate_action())
    content = matrix_markdown(matrix, label)
    if not tests:
        content += "\n\n" + tr("empty", project=label)
    await cl.Message(content=content, actions=actions).send()
    if tests:
        await send_finished_step(tr("steps"), "tool", scenarios_markdown(tests), icon="list")
    suspects = [t for t in tests if t.suspect is not None]
    if suspects:
        buttons = [
            cl.Action(name=CONFIRM, payload={"test": t.id}, label=tr("confirm", test=t.id),
                      icon="check")
            for t in suspects[:MAX_CONFIRM_BUTTONS]
        ]  # fmt: skip
        await cl.Message(content=suspects_markdown(suspects), actions=buttons).send()


@button_action(SHOW)
async def on_show(action: cl.Action) -> None:
    await show_tests()


@button_action(CONFIRM)
async def on_confirm(action: cl.Action) -> None:
    test_id = action.payload.get("test")
    if isinstance(test_id, str) and test_id:
        await confirm_test(test_id, action)


async def confirm_test(test_id: str, action: cl.Action | None = None) -> None:
    opened = await project_tests()
    if opened is None:
        return
    project, tests = opened
    try:
        found = next((t for t in await tests.tests(project) if t.id == test_id), None)
        label = project_label(project)
        if found is None:
            await cl.Message(
                content=f"⚠️ {tr('confirm_unknown', project=label, test=test_id)}"
            ).send()
            return
        if found.requirement_uid not in {i.uid for i in await tests.store.items(project)}:
            gone = tr("confirm_gone", test=test_id, requirement=found.requirement_id)
            await cl.Message(content=f"⚠️ {gone}").send()
            return
        test, was_suspect = await tests.confirm(project, test_id, owner())
    except WorkspaceError as error:
        await say_refused("confirmation refused", error)
        return
    key = "confirmed" if was_suspect else "confirmed_not_suspect"
    if action is not None:
        await action.remove()
    await cl.Message(content=tr(key, test=test.id, requirement=test.requirement_id)).send()
