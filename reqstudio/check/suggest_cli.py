"""`reqstudio check --suggest`: the check's report, then a model's rewrite of each requirement
with findings, judged by the meaning guard and re-checked. Loaded only with --suggest: the
plain check needs no model and imports none of this."""

from __future__ import annotations

import argparse
import sys

from reqstudio.check.engine import CheckReport
from reqstudio.check.suggest import DEFAULT_MAX, Suggestion, SuggestRun, suggest_rewrites


def say(key: str, language: str, **values: object) -> str:
    from reqstudio.messages import text

    return text(f"check_suggest.{key}", language, **values)


def verdict_line(suggestion: Suggestion, language: str) -> str:
    r = suggestion.requirement
    place = {"rid": r.label, "line": r.line}
    guarded = suggestion.guarded
    if guarded is None:
        return say("failed", language, **place, error=suggestion.error)
    if guarded.accepted:
        return say(
            "accepted", language, **place,
            before=len(guarded.findings_before), after=len(guarded.findings_after),
        )  # fmt: skip
    return say(
        "refused",
        language,
        **place,
        reasons=say("separator", language).join(guarded.reasons(language)),
    )


def render_suggestions(run: SuggestRun, language: str) -> str:
    out = [f"## {say('heading', language, model=run.model)}"]
    for suggestion in run.suggestions:
        out.append(verdict_line(suggestion, language))
        if suggestion.guarded is not None:
            out.append(f"    {suggestion.guarded.diff}")
    s = run.summary()
    line = say(
        "summary", language, asked=s["asked"], accepted=s["accepted"], fewer=s["fewer_findings"],
        refused=s["refused"], failed=s["failed"],
    )  # fmt: skip
    if run.not_asked:
        line += say("not_asked", language, n=run.not_asked)
    out += ["", line]
    return "\n".join(out)


def suggest_exit_code(run: SuggestRun) -> int:
    """0 when every suggestion was answered (accepted or refused: both are results), 3 when
    some calls failed, 1 when every one did."""
    from reqstudio.cli import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_OK

    if run.complete:
        return EXIT_OK
    return EXIT_FAILED if run.failed == len(run.suggestions) else EXIT_INCOMPLETE


def suggest_command(args: argparse.Namespace, report: CheckReport, language: str) -> int:
    from reqstudio.check.jsonout import dumps_indented
    from reqstudio.check.report import render_text
    from reqstudio.cli import run_mode

    async def work(runtime) -> int:
        def progress(suggestion: Suggestion) -> None:
            print(verdict_line(suggestion, language), file=sys.stderr, flush=True)

        run = await suggest_rewrites(
            runtime.factory(), report, args.suggest_max or DEFAULT_MAX, on_suggestion=progress
        )
        if args.json:
            data = {"file": str(args.file), **report.as_dict(), "suggestions": run.as_dict()}
            print(dumps_indented(data))
        else:
            print(render_text(report, language, show_suppressed=args.show_suppressed))
            print()
            print(render_suggestions(run, language))
        if not run.complete:
            print(say("partial", language, failed=run.failed, asked=len(run.suggestions)),
                  file=sys.stderr)  # fmt: skip
        return suggest_exit_code(run)

    return run_mode(work, language=language)
