"""Baselines in the browser: "Freeze as baseline" on a document a mode produced (the document's
requirement items stored in the thread's project and frozen under a name the user gives), and
"Compare with baseline": the meaning-aware diff of a baseline of the project against the
document, as a table in the user's language (`reqstudio.workspace.diff_report`).

The buttons carry the document's text: the browser keeps buttons across a reload of the
thread, the session does not keep what it showed."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import chainlit as cl

from reqstudio.web.projects import owner, project_label, thread_id, thread_project, workspace_store
from reqstudio.web.session import LocalizedAskAction, button_action
from reqstudio.web.texts import Catalog, counted, lang
from reqstudio.web.workspace_buttons import generate_action, show_action
from reqstudio.workspace.store import MAX_NAME, Project, WorkspaceError, check_name

log = logging.getLogger("reqstudio.ui")

FREEZE = "freeze_baseline"
COMPARE = "compare_baseline"
CHOICES_SHOWN = 5  # the latest baselines offered for a comparison

tr = Catalog("workspace")


def baseline_actions(name: str, markdown: str) -> list[cl.Action]:
    """The buttons under a produced document (`name` its file, e.g. `improved.md`)."""
    payload = {"document": name, "text": markdown}
    return [
        cl.Action(name=FREEZE, payload=payload, label=tr("freeze")),
        cl.Action(name=COMPARE, payload=payload, label=tr("compare")),
    ]


def _document(action: cl.Action) -> tuple[str, str] | None:
    name, text = action.payload.get("document"), action.payload.get("text")
    if not isinstance(name, str) or not isinstance(text, str) or not text.strip():
        return None
    return name, text


def _requirements(items) -> int:
    return sum(1 for item in items if item.kind not in ("heading", "information"))


async def ask_baseline_name() -> str | None:
    """The baseline name the user gives (asked for, checked); None when none came or it is
    not a name (said)."""
    answer = await cl.AskUserMessage(content=tr("freeze_ask"), timeout=600).send()
    if not answer:
        return None
    try:
        return check_name(str(answer.get("output") or ""), "a baseline name")
    except WorkspaceError:
        await _say(f"⚠️ {tr('freeze_bad_name', max=MAX_NAME)}")
        return None


async def new_baseline() -> tuple[str, Project] | None:
    """The name the user gives a new baseline and the thread's project it is for; None when
    no name came, it is not a name, or the project has a baseline of that name (said). The
    store's refusals (`WorkspaceError`) are the caller's to say."""
    name = await ask_baseline_name()
    if name is None:
        return None
    project = await thread_project()
    if any(b.name == name for b in await workspace_store().baselines(project)):
        await _say(f"⚠️ {tr('freeze_taken', baseline=name, project=project_label(project))}")
        return None
    return name, project


async def _say(text: str) -> None:
    await cl.Message(content=text).send()


async def _on_document(action: cl.Action, work: Callable[[str, str], Awaitable[None]]) -> None:
    """`work(file_name, text)` on the document the button carries (none: nothing)."""
    document = _document(action)
    if document is not None:
        await work(*document)


@button_action(FREEZE)
async def on_freeze(action: cl.Action) -> None:
    await _on_document(action, freeze)


async def freeze(file_name: str, text: str) -> None:
    from reqstudio.workspace.freeze import freeze_document

    try:
        chosen = await new_baseline()
        if chosen is None:
            return
        name, _ = chosen  # the document is stored in the thread's project, then frozen
        frozen = await freeze_document(
            workspace_store(), owner(), thread_id(), text, name, file_name.removesuffix(".md")
        )
    except WorkspaceError as error:
        await _say(f"⚠️ {tr('freeze_refused', reason=str(error))}")
        return
    said = tr(
        "frozen",
        baseline=frozen.baseline.name,
        project=project_label(frozen.project),
        items=counted(_requirements(frozen.stored.items), "requirement"),
    )
    if suspect := frozen.baseline.suspect_tests:
        said += "\n\n" + tr("suspect_marked", count=len(suspect), tests=", ".join(suspect))
    # the project now holds the document's requirements: its tests and matrix, new tests
    await cl.Message(content=said, actions=[show_action(), generate_action()]).send()


async def _pick_baseline(names: list[str]) -> str | None:
    """The baseline to compare with: the only one, or the one the user picks."""
    if len(names) == 1:
        return names[0]
    latest = names[-CHOICES_SHOWN:][::-1]
    answer = await LocalizedAskAction(
        content=tr("compare_which"),
        actions=[cl.Action(name="baseline", payload={"name": n}, label=n) for n in latest],
        timeout=600,
    ).send()
    picked = (answer or {}).get("payload", {}).get("name")
    return picked if picked in latest else None


@button_action(COMPARE)
async def on_compare(action: cl.Action) -> None:
    await _on_document(action, compare)


async def compare(file_name: str, text: str) -> None:
    from reqstudio.workspace.diff import diff_items
    from reqstudio.workspace.diff_report import render_markdown
    from reqstudio.workspace.items import items_from_text

    store = workspace_store()
    try:
        project = await thread_project()
        names = [b.name for b in await store.baselines(project)]
        if not names:
            await _say(tr("no_baseline", project=project_label(project)))
            return
        name = await _pick_baseline(names)
        if name is None:
            return
        old = await store.baseline_items(project, name)
    except WorkspaceError as error:
        await _say(f"⚠️ {tr('freeze_refused', reason=str(error))}")
        return
    diff = diff_items(old, items_from_text(text, file_name.removesuffix(".md")))
    heading = tr("compared", baseline=name, project=project_label(project), document=file_name)
    await _say(f"**{heading}**\n\n{render_markdown(diff, lang())}")
