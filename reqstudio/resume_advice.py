"""Whether resuming a failed run can go otherwise than the run that failed, read from what the
failure needs changed (`reqstudio.errors.Remedy`): one decision for the browser's Resume button
(`reqstudio.web.resume_advice`) and the commands' `--resume` hint, so the two never disagree.

- "retry": the fault may pass; resuming as it is can succeed.
- "model" / "size": the same model would fail the same way; resuming helps only with another
  model (the browser's settings offer one when several are configured; a command runs with
  whatever model its environment names, so it first says to change it).
- "settings": the provider refused the request itself; the configuration changes first."""

from __future__ import annotations

from reqstudio.errors import Remedy


def resume_can_help(remedy: Remedy | str, other_models: bool) -> bool:
    """Whether resuming now, with at most another configured model picked, can go otherwise."""
    if remedy == "retry":
        return True
    if remedy == "settings":
        return False
    return other_models


def advice_key(remedy: Remedy | str, other_models: bool) -> str | None:
    """The catalogue key (under the caller's section) of what to change before resuming; None
    when nothing needs changing."""
    if remedy == "retry":
        return None
    if remedy == "settings":
        return "advice_settings"
    return f"advice_{remedy}" if other_models else f"advice_{remedy}_only"
