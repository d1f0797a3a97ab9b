"""Review mode in the browser: a document uploaded (or pasted, or the SRS just written), then
one Step per round ("审阅 · 第 2 轮") with a nested step per reviewer (its findings as tables)
and per revised section (its text streaming, then the diff), and a final message with the stop
reason, the improvement trajectory in words and as a chart, the disagreements, and downloads.

- `mode`: the conversation (settings, upload, Resume) and the mode's entry
- `flow`: the run, its events drawn round by round, the pause between rounds
- `view`: one round's steps; `tables`: what a round shows, as markdown
- `results`: the closing messages and the downloads; `chart`: the trajectory chart
"""

from reqstudio.web.review.flow import render_review
from reqstudio.web.review.mode import REVIEW_MODE, review_generated_srs
from reqstudio.web.review.results import (
    improved_document_text,
    partial_download_contents,
    partial_text,
)
from reqstudio.web.review.tables import final_text, round_details

__all__ = [
    "REVIEW_MODE",
    "final_text",
    "improved_document_text",
    "partial_download_contents",
    "partial_text",
    "render_review",
    "review_generated_srs",
    "round_details",
]
