"""Rewrite mode in the browser: the original uploaded (or pasted), clarifications from a .json
or asked one at a time, then the run, the result as .md and .json, and Resume for a run that
failed or was stopped.

- `mode`: the conversation (original, Resume) and the mode's entry
- `clarify`: the clarifications, from a file or asked
- `flow`: the run and how it ends; `progress`: its steps; `tables`: what a step shows
"""

from reqstudio.web.rewrite.flow import render_rewrite
from reqstudio.web.rewrite.mode import REWRITE_MODE

__all__ = ["REWRITE_MODE", "render_rewrite"]
