"""`reqstudio review --doc FILE [--max-rounds N] [--out improved.md] [--json reviews.json]`.

Arguments are checked before any model is started or called: a missing or unreadable
document, a round limit outside 1-10, or an output path that cannot be written exit with code 2
and one line; so does a document too large for the model's context (checked before the first
call). Progress goes to stderr; without --out the improved document goes to stdout.

A run that fails after a finished round loses nothing: the last finished version is written,
marked incomplete on its first line, to --out (without --out: `<doc>.partial.md` beside the
document), with the reviews so far to --json (without --json: `<that file>.reviews.json`
beside it); the error line says where, and the exit code is 3. A run that fails before any
round finished writes nothing and exits 1.

A finished run exits 0 only when it passed: the version it returns has no open high-priority
finding and every reviewer took part (`reqstudio.modes.review.verdict`); every other finished run writes
its result too and exits 4, finished without a pass (the JSON's `stop_reason` says which stop).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reqstudio import cli as harness
from reqstudio.events import BaseEvent
from reqstudio.outcomes import Outcome
from reqstudio.progress import Progress, Said, Words

if TYPE_CHECKING:
    from reqstudio.llm import ModelFactory
    from reqstudio.modes.review.engine import ReviewRequest, ReviewResult
    from reqstudio.modes.review.events import RunFailed
    from reqstudio.modes.review.models import ReviewRound
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import Settings


def register(subparsers: argparse._SubParsersAction) -> None:
    review = harness.add_command(
        subparsers,
        "review",
        "A red team, blue team, client and judge review the document; the authors "
        "of the sections with high-priority issues fix exactly those, until the issues "
        "converge. Progress on stderr; the improved document on stdout unless --out is given.",
    )
    review.add_argument(
        "--doc", required=True, type=Path, help="the document (.md .txt .pdf .docx)"
    )
    review.add_argument(
        "--max-rounds", type=int, default=None, help="review rounds at most, 1-10 (default 3)"
    )
    review.add_argument("--out", type=Path, help="write the improved Markdown here")
    review.add_argument("--json", type=Path, help="write every review (JSON) here")
    review.set_defaults(handler=review_command)


async def review_with_progress(request: ReviewRequest, factory: ModelFactory) -> ReviewResult:
    """The review, its progress on stderr (`ReviewWords`); raises `ReviewFailed` when it
    failed or ended without a result."""
    from reqstudio.modes.review.engine import run_review

    progress = Progress(ReviewWords())
    async for event in run_review(request, factory):
        progress.show(event)
        if progress.failed is not None or progress.finished is not None:
            break
    if progress.failed is not None:
        failed = progress.failed
        raise ReviewFailed(failed.message, failed.partial, failed)
    if progress.finished is not None:
        return progress.finished.result
    raise ReviewFailed("the review ended without a result", None)


class ReviewWords(Words):
    """The review's events in words on stderr; the improved document is written by the
    command once the run is over."""

    def lines(self, event: BaseEvent) -> Said:
        from reqstudio.modes.review import events

        match event:
            case events.RoundStarted(round=number):
                return f"INFO: Round {number}: red team, blue team and client reviewing..."
            case events.ReviewerFinished(round=number, reviewer=reviewer):
                return f"INFO: Round {number}: {reviewer} done"
            case events.ReviewerFailed(round=number, reviewer=reviewer, reason=reason):
                return f"WARNING: Round {number}: {reviewer} unreadable: {reason}"
            case events.DecisionMade(round=number, decision=decision, record=record):
                verdict = (
                    f"revise {', '.join(decision.focus_on)}"
                    if decision.action == "iterate"
                    else f"stop ({decision.reason}"
                    f"{': ' + decision.detail if decision.detail else ''})"
                )
                said = [f"INFO: Round {number}: {len(decision.improvements)} issue(s); {verdict}"]
                return said + (tracking_lines(record) if record is not None else [])
            case events.AuthorStarted(round=number, agent_id=agent_id, title=title):
                return f"INFO: Round {number}: revising {agent_id} {title}"
            case events.SectionRevised(round=number, revision=revision) if (
                revision.outcome != "changed"
            ):
                why = revision.failed or revision.rejected or "the author returned it unchanged"
                return f"WARNING: Round {number}: {revision.agent_id} {revision.outcome}: {why}"
        return None


def tracking_lines(record: ReviewRound) -> list[str]:
    """The round's issues by status ("new I-5; persisting I-1, I-3; resolved I-2") and what
    the red team said about earlier issues that could not be used."""
    by_status: dict[str, list[str]] = {}
    for entry in record.issue_statuses:
        by_status.setdefault(entry.status, []).append(entry.issue_id)
    lines = []
    if by_status:
        parts = [
            f"{status} {', '.join(by_status[status])}"
            for status in ("new", "persisting", "regressed", "resolved")
            if status in by_status
        ]
        lines.append(f"INFO: Round {record.round}: issues {'; '.join(parts)}")
    broken = [c for c in record.checks if c.holds is False]
    if record.checks:
        lines.append(
            f"INFO: Round {record.round}: {len(record.checks)} check(s) of the last revision, "
            f"{len(broken)} broken"
            + (f" ({', '.join(c.check_id for c in broken)})" if broken else "")
        )
    for overruled in record.overruled:
        lines.append(
            f"INFO: Round {record.round}: {overruled.issue_id} overruled by the judge "
            f"({overruled.aspect}): {overruled.ruling}"
        )
    lines += [f"WARNING: Round {record.round}: {note}" for note in record.tracking_notes]
    return lines


class ReviewFailed(RuntimeError):
    """The review stopped: str() says why in English; `failed` is the engine's failed event,
    which says it in the document's language too (`said`)."""

    def __init__(self, message: str, partial: object, failed: RunFailed | None = None):
        super().__init__(message)
        self.partial = partial
        self.failed = failed

    def said(self, language: str) -> str:
        """Why, in `language`: the failed event's words, else str()."""
        return self.failed.text(language) if self.failed is not None else str(self)


def review_command(args: argparse.Namespace) -> int:
    # The engine, LangGraph and the model client: imported only when the command runs.
    from reqstudio.modes.review.documents import document_too_large, load_document
    from reqstudio.modes.review.engine import ReviewRequest

    settings = harness.load_mode_settings()
    max_rounds = settings.review_max_rounds if args.max_rounds is None else args.max_rounds
    if not 1 <= max_rounds <= 10:
        raise harness.UsageError(f"--max-rounds: {max_rounds} is not between 1 and 10")
    max_mb = settings.reference_max_mb
    text = harness.read_input(
        "--doc", args.doc, lambda path: load_document(path, max_mb=max_mb).text, need_text=True
    )
    request = ReviewRequest(document=text, title=args.doc.stem, max_rounds=max_rounds)

    def review(runtime: AppRuntime) -> int:
        factory = runtime.factory()
        too_large = document_too_large(text, factory, args.doc.name)
        if too_large is not None:
            raise harness.UsageError(f"--doc: {too_large.message('en')}")
        try:
            result = asyncio.run(review_with_progress(request, factory))
        except ReviewFailed as error:
            return save_incomplete(error, args, settings)
        return write_result(args, result)

    return harness.run_mode(
        review, settings=settings, outputs={"--out": args.out, "--json": args.json}
    )


def write_result(args: argparse.Namespace, result: ReviewResult) -> int:
    if args.out is not None:
        args.out.write_text(result.improved_markdown, encoding="utf-8")
    else:
        sys.stdout.write(result.improved_markdown)
        sys.stdout.flush()
    if args.json is not None:
        write_json(args.json, result)
    harness.say(f"INFO: Trajectory: {result.trajectory_text()}")
    if note := result.best_version_note("en"):
        harness.say(f"INFO: Best version: {note}")
    from reqstudio.usage import token_count_text

    done = (
        f"{result.stop_reason}, {len(result.rounds)} round(s), "
        f"{token_count_text(result.usage)} tokens, {result.seconds:.1f} s"
    )
    outcome = result.outcome
    if outcome is Outcome.PASSED:
        harness.say(f"INFO: Done: {done}")
    else:
        # Written out, but not passed: a script checking the exit code must not sign it off.
        if result.stop_reason == "reviewer_failed":
            harness.say(f"ERROR: The review stopped without a verdict: {result.stop_detail}")
        for line in no_pass_lines(result):
            harness.say(f"WARNING: {line}")
        harness.say(f"WARNING: Finished without a pass: {done}")
    return review_exit_code(result)


def review_exit_code(result: ReviewResult) -> int:
    """The exit code of a finished review: its outcome's, as the browser's mark is."""
    return harness.exit_code(result.outcome)


def no_pass_lines(result: ReviewResult) -> list[str]:
    """Why a finished review is no pass: the reviewers that could not review, and the
    high-priority findings the returned version still holds."""
    lines = [f"Not every reviewer could review: {f}" for f in result.failed_reviewers]
    if open_findings := result.open_findings_text("en"):
        lines.append(
            f"The returned version (reviewed in round {result.returned_round}) still has "
            f"{len(result.open_findings())} open high-priority finding(s): {open_findings}"
        )
    return lines


def write_json(path: Path, result: ReviewResult) -> None:
    data = result.reviews_json()
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def save_incomplete(error: ReviewFailed, args: argparse.Namespace, settings: Settings) -> int:
    """After a failure: the finished rounds' document and reviews written (exit 3), or, when
    no round finished, only the error (exit 1)."""
    from reqstudio.modes.review.engine import ReviewResult
    from reqstudio.modes.review.partial import incomplete_json, incomplete_markdown, revised_through

    partial = error.partial
    if not (isinstance(partial, ReviewResult) and partial.rounds):
        harness.say(f"ERROR: {error}")
        return failure_exit_code(None)
    reason = str(error)
    markdown_path = args.out if args.out is not None else harness.partial_path(args.doc)
    in_document = error.said(partial.language)
    markdown_path = save_beside(
        markdown_path, incomplete_markdown(partial, in_document), settings.data_dir
    )
    json_path = args.json
    if json_path is None:
        json_path = markdown_path.with_name(f"{markdown_path.stem}.reviews.json")
    json_path = save_beside(
        json_path,
        json.dumps(incomplete_json(partial, reason), ensure_ascii=False, indent=2) + "\n",
        settings.data_dir,
    )
    revised = revised_through(partial)
    version = f"as revised through round {revised}" if revised else "not yet revised"
    harness.say(
        f"ERROR: {reason} (incomplete result kept: the document {version} in {markdown_path}, "
        f"the reviews of {len(partial.rounds)} round(s) in {json_path})"
    )
    return failure_exit_code(partial)


def failure_exit_code(partial: object) -> int:
    """The exit code of a run that failed midway (3 with finished rounds kept, else 1), as
    the browser's mark is (`reqstudio.modes.review.verdict.failed_run_outcome`)."""
    from reqstudio.modes.review.verdict import failed_run_outcome

    return harness.exit_code(failed_run_outcome(partial))


def save_beside(path: Path, text: str, fallback_dir: Path) -> Path:
    """Write `text` to `path` (checked writable before the run, or chosen by us beside the
    input); if that fails, to the same name in the data folder. Where it went."""
    where, problem = harness.write_with_fallback(path, text, [fallback_dir])
    if where is None:
        raise OSError(f"could not write {path} ({problem}), nor in {fallback_dir}")
    return where
