"""The settings panel (⚙): the thread's model and temperature, then the mode's own settings.

The panel is sent with the values the thread chose (kept in its metadata by Chainlit), so a
reopened or reloaded thread shows and uses them. Whatever the browser sends back is checked
against what was offered: a model not among the configured ones, a temperature out of range
or a setting no panel has is refused, and the thread keeps what it had. The browser only ever
sees model names; a model's provider URL and key stay on the server.
"""

from __future__ import annotations

import logging
from typing import Any

import chainlit as cl
from chainlit.input_widget import InputWidget, Select, Slider, Switch

from reqstudio.llm import ModelFactory, ThreadModel, model_choices
from reqstudio.settings import ModelSpec
from reqstudio.web.modes import ModeSpec, current_mode
from reqstudio.web.projects import (
    PROJECT_ID,
    choose_project,
    current_choice,
    load_project_choices,
    project_widget,
)
from reqstudio.web.session import persist_thread_state, runtime, send_notice
from reqstudio.web.texts import Catalog

log = logging.getLogger("reqstudio")

MODEL_ID = "thread_model"
TEMPERATURE_ON_ID = "thread_temperature_on"
TEMPERATURE_ID = "thread_temperature"
DEFAULT_CHOICE = "default"
ACCEPTED_KEY = "settings_accepted"  # the panel's values as last accepted, to fall back on

tr = Catalog("settings")


def choices() -> dict[str, ModelSpec]:
    """The configured models a thread may pick, by name."""
    return model_choices(runtime().settings, runtime().endpoint)


def model_select(setting_id: str, label: str, default_label: str) -> Select:
    """A choice among the configured models; "default" first, labelled in the user's language."""
    items = {default_label: DEFAULT_CHOICE, **{name: name for name in choices()}}
    return Select(id=setting_id, label=label, items=items, initial_value=DEFAULT_CHOICE)


def thread_widgets() -> list[InputWidget]:
    settings = runtime().settings
    return [
        model_select(MODEL_ID, tr("model"), tr("model_default", model=runtime().endpoint.model)),
        Switch(id=TEMPERATURE_ON_ID, label=tr("temperature_on"), initial=False),
        Slider(
            id=TEMPERATURE_ID,
            label=tr("temperature"),
            initial=settings.temp_chat,
            min=0,
            max=2,
            step=0.1,
        ),
        project_widget(),
    ]


def panel_widgets(mode: ModeSpec) -> list[InputWidget]:
    return [*thread_widgets(), *(mode.settings() if mode.settings else [])]


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def acceptable(widget: InputWidget, value: Any) -> bool:
    """Whether `value` is one the widget offers."""
    if isinstance(widget, Select):
        return isinstance(value, str) and value in widget.items.values()
    if isinstance(widget, Switch):
        return isinstance(value, bool)
    if isinstance(widget, Slider):
        return is_number(value) and widget.min <= value <= widget.max
    return False


def chosen_settings() -> dict[str, Any]:
    return cl.context.session.chat_settings or {}


async def send_settings(mode: ModeSpec) -> None:
    """Show the panel with what the thread chose (a new thread: the defaults); the project as
    the workspace stores it."""
    await load_project_choices()
    widgets = panel_widgets(mode)
    chosen = chosen_settings()
    for widget in widgets:
        if widget.id == PROJECT_ID:
            continue
        if widget.id in chosen and acceptable(widget, chosen[widget.id]):
            widget.initial = chosen[widget.id]
    values = await cl.ChatSettings(widgets).send()
    cl.user_session.set(ACCEPTED_KEY, values)


def shown_value(widget: InputWidget, value: Any) -> str:
    if isinstance(widget, Select):
        return next((label for label, item in widget.items.items() if item == value), str(value))
    if isinstance(widget, Switch):
        return tr("on") if value else tr("off")
    return str(value)


async def check_settings_update(update: dict[str, Any]) -> None:
    """Keep what the panel offers; refuse the rest and say so (Chainlit has already written
    every key the browser sent into the session's settings)."""
    mode = current_mode()
    widgets = {widget.id: widget for widget in panel_widgets(mode)}
    chosen = cl.context.session.chat_settings
    accepted = cl.user_session.get(ACCEPTED_KEY) or {}
    refused: list[str] = []
    for key, value in update.items():
        widget = widgets.get(key)
        if widget is None:
            chosen.pop(key, None)
            log.warning("settings: refused a setting no panel has: %r", key[:60])
            continue
        if acceptable(widget, value):
            if key == PROJECT_ID and not await choose_project(value):
                chosen[key] = current_choice()
            continue
        kept = accepted.get(key, widget.initial)
        chosen[key] = kept
        refused.append(tr("refused_one", setting=widget.label, kept=shown_value(widget, kept)))
    cl.user_session.set(ACCEPTED_KEY, {k: chosen[k] for k in widgets if k in chosen})
    if refused:
        await send_notice(tr("refused", settings="; ".join(refused)))
        await send_settings(mode)  # the panel shows what stands
    if cl.context.session.has_first_interaction:  # a thread in the history: saved at once
        await persist_thread_state()


def thread_model() -> ThreadModel:
    """The thread's model and temperature, as accepted; anything else counts as the default."""
    chosen = chosen_settings()
    name = chosen.get(MODEL_ID)
    spec = choices().get(name) if isinstance(name, str) else None
    value = chosen.get(TEMPERATURE_ID)
    chosen_one = chosen.get(TEMPERATURE_ON_ID) is True and is_number(value) and 0 <= value <= 2
    return ThreadModel(spec=spec, temperature=float(value) if chosen_one else None)


def thread_factory() -> ModelFactory:
    """The model factory for this thread's runs: its chosen model and temperature applied."""
    return runtime().factory(thread_model())
