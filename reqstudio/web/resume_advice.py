"""What a failed run's message says about resuming it, in every mode that resumes (Review,
Rewrite, SRS): Resume is offered only when a resumed run can go otherwise than the failed one
(a fault that may pass, or another model the user can pick in the settings), and the message
says what to change first; a Resume that could only repeat the failure is not offered.

The decision is `reqstudio.resume_advice`'s (the commands' `--resume` hint follows it too).
A thread reopened later (after a restart too) offers Resume by the same decision: the ending
is saved with the thread (`remember_ending`), and `resume_refused` says no while the model
the run failed with is still the thread's and nothing else can be picked."""

from __future__ import annotations

from dataclasses import dataclass

import chainlit as cl

from reqstudio.errors import Remedy
from reqstudio.resume_advice import advice_key, resume_can_help
from reqstudio.web.texts import t

# The thread's failed runs whose ending offered no Resume: run key -> {remedy, model}.
REFUSED_KEY = "resume_refused"


@dataclass(frozen=True)
class ResumeAdvice:
    text: str  # what to change before resuming ("" when nothing needs changing)
    offer: bool  # whether a Resume button can do something now


def other_models_configured() -> bool:
    """Whether the settings (⚙) offer the thread a model besides the one that failed."""
    from reqstudio.web.settings_panel import choices

    try:
        return len(choices()) > 1
    except Exception:  # no runtime (a test of the texts): say what needs configuring
        return False


def resume_advice(remedy: Remedy) -> ResumeAdvice:
    """The decision of `reqstudio.resume_advice` (the commands' too), with the settings'
    models, in the user's words."""
    switch = remedy not in ("retry", "settings") and other_models_configured()
    key = advice_key(remedy, switch)
    return ResumeAdvice(t(key) if key else "", resume_can_help(remedy, switch))


def model_in_use() -> str:
    """The model this thread's runs call now (the provider's address and the model's name):
    a run that failed with another one may go otherwise when resumed."""
    from reqstudio.web.session import runtime
    from reqstudio.web.settings_panel import thread_model

    try:
        endpoint = runtime().endpoint
        spec = thread_model().spec
    except Exception:  # no runtime: nothing to tell apart
        return ""
    if spec is not None:
        return f"{spec.base_url or endpoint.base_url or ''}|{spec.model}"
    return f"{endpoint.base_url or ''}|{endpoint.model}"


async def remember_ending(run_key: str, remedy: Remedy | str, offered: bool) -> None:
    """Save with the thread whether this run's failed ending offered Resume, so a reopened
    thread offers it only as the ending did (until the model changes)."""
    from reqstudio.web.thread_state import persist_thread_state

    refused = dict(cl.user_session.get(REFUSED_KEY) or {})
    if offered:
        refused.pop(run_key, None)
    else:
        refused[run_key] = {"remedy": remedy, "model": model_in_use()}
    cl.user_session.set(REFUSED_KEY, refused)
    await persist_thread_state()


def resume_refused(run_key: str | None) -> bool:
    """Whether a reopened thread must not offer to resume `run_key`: its ending offered no
    Resume, and resuming still cannot go otherwise (the same model, no other to pick)."""
    entry = (cl.user_session.get(REFUSED_KEY) or {}).get(str(run_key)) if run_key else None
    if not isinstance(entry, dict):
        return False
    if entry.get("model") != model_in_use():
        return False  # the thread calls another model now
    return not resume_advice(entry.get("remedy", "retry")).offer
