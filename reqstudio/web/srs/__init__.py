"""SRS mode in the browser: reference upload, one collapsible Step per agent and round,
the SRS streamed into the final message, downloads, evaluation, stop and resume.

- `mode`: the conversation (settings, description, Resume) and the mode's entry
- `reference`: the reference SRS, attached or asked for
- `flow`: the run, its steps and the streamed SRS; `tables`: what a step shows, as markdown
- `evaluate`: Review & improve and Evaluate; `thread`: what a reopened thread shows again
"""

from reqstudio.web.srs.evaluate import evaluate_last_result
from reqstudio.web.srs.flow import render_run
from reqstudio.web.srs.mode import SRS_MODE, system_name

__all__ = ["SRS_MODE", "evaluate_last_result", "render_run", "system_name"]
