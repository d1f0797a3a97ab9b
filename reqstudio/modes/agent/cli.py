"""`reqstudio agent "question"`: one Agent-mode answer. The steps go to stderr, the answer to
stdout, and `--stats-json FILE` writes the run's statistics.

stdout gets the answer only once it is whole (the provider ended it with a finish reason), so
a retried or cut answer never reaches it shorter or twice (what a failed run wrote goes to
stderr, marked as not complete). A failed run that had produced something (a partial answer,
tool results) keeps it in a file under the data directory (`failed-runs/`), named on stderr."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reqstudio.cli import (
    UsageError,
    add_command,
    add_lang_option,
    exit_code,
    load_mode_settings,
    process_started,
    run_mode,
)
from reqstudio.events import BaseEvent, payload
from reqstudio.kept_runs import keep_and_say
from reqstudio.modes.agent import events
from reqstudio.progress import Inline, Progress, Said, Words

if TYPE_CHECKING:
    from reqstudio.modes.agent.outcome import AgentEnding
    from reqstudio.modes.agent.state import AgentConfig
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import Settings

# Kept from the answer's time for printing the outcome and ending the process.
EXIT_SECONDS = 0.5


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = add_command(
        subparsers, "agent", "Agent mode: the steps are printed on stderr, the answer on stdout."
    )
    parser.add_argument("question", help="what to ask")
    parser.add_argument("--stats-json", type=Path, metavar="FILE", help="write statistics here")
    parser.add_argument(
        "--mcp-config",
        type=Path,
        metavar="FILE",
        help="MCP servers config (default: $REQSTUDIO_MCP_CONFIG, else ./mcp.json, else the bundled one)",
    )
    parser.add_argument("--no-mcp", action="store_true", help="do not start MCP servers")
    parser.add_argument("--no-search", action="store_true", help="no web_search tool")
    parser.add_argument(
        "--yes",
        action="store_true",
        help="allow MCP tools that may change things (not marked read-only); without it "
        "their calls are refused",
    )
    add_lang_option(parser, "notices", default="en")
    parser.set_defaults(handler=run)


def mcp_config_path(args: argparse.Namespace, settings: Settings) -> Path | None:
    from reqstudio.tools.mcp_tools import McpConfigError, resolve_mcp_config

    if args.no_mcp:
        return None
    try:
        return resolve_mcp_config(args.mcp_config or settings.mcp_config)
    except McpConfigError as exc:
        raise UsageError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    # The engine, LangChain and the model client: imported only when the command runs.
    from reqstudio.modes.agent.engine import show_trace_on_stderr
    from reqstudio.modes.agent.state import AgentConfig

    if not args.question.strip():
        raise UsageError("the question is empty")
    settings = load_mode_settings()
    config = AgentConfig.from_settings(settings, language=args.lang)
    # The limit counts from the process start (see `ask`), and the command must have ended by
    # limit + 5 s, so the answer gets until limit + 5 s less what writing out and exiting take.
    config.answer_grace = max(0.0, config.answer_grace - EXIT_SECONDS)
    if config.verbose:
        show_trace_on_stderr()  # with the steps
    mcp_path = mcp_config_path(args, settings)
    return run_mode(
        lambda runtime: ask(runtime, config, args, mcp_path), settings=settings, language=args.lang
    )


async def ask(
    runtime: AppRuntime, config: AgentConfig, args: argparse.Namespace, mcp_path: Path | None
) -> int:
    from reqstudio.modes.agent.engine import ReactAgent
    from reqstudio.modes.agent.outcome import ending_of
    from reqstudio.tools.confirmation import always, guard_side_effects
    from reqstudio.tools.mcp_tools import McpConfigError, McpToolbox, read_mcp_config
    from reqstudio.tools.web_search import WebSearch, load_backend

    if mcp_path is not None:
        try:
            read_mcp_config(mcp_path)
        except McpConfigError as exc:
            raise UsageError(str(exc)) from None
    async with McpToolbox.open(mcp_path) as toolbox:
        for status in toolbox.statuses:
            state = f"{len(status.tools)} tool(s)" if status.ok else f"left out: {status.error}"
            print(f"[mcp] {status.name}: {state}", file=sys.stderr)
        search = WebSearch(load_backend(runtime.settings.search_backend))
        tools = [] if args.no_search else [search.as_tool()]
        # Nobody to ask on the command line: a tool that may change things runs with --yes only
        mcp_tools = guard_side_effects(
            toolbox.tools, always(args.yes), runtime.settings.mcp_read_only_names
        )
        agent = ReactAgent(runtime.factory(), [*tools, *mcp_tools], config)
        words = AgentWords()
        progress = Progress(words)
        stats: events.Stats | None = None
        # The time limit counts from the process start: the user waits from launch.
        async for event in agent.run(args.question, started=process_started()):
            progress.show(event)
            if isinstance(event, events.Stats):
                stats = event
        failure: events.Failed | None = progress.failed
        if args.stats_json and stats is not None:
            report: dict[str, Any] = {
                "question": args.question,
                "ok": failure is None and not words.echoed,
                **payload(stats),
                "mcp_servers": [vars(s) for s in toolbox.statuses],
            }
            args.stats_json.parent.mkdir(parents=True, exist_ok=True)
            args.stats_json.write_text(json.dumps(report, ensure_ascii=False, indent=2))
        if failure is not None:
            keep_failure(runtime.settings.data_dir, args.question, failure, stats)
    return agent_exit_code(ending_of(failure, echoed=words.echoed))


def agent_exit_code(ending: AgentEnding) -> int:
    """The exit code of an Agent run: its ending's outcome (`reqstudio.modes.agent.outcome`), as the
    browser's mark is: 0 for a whole answer, 4 for the time limit during the answer, 1 for a
    failure or an answer that only gave back the app's instructions."""
    from reqstudio.modes.agent.outcome import agent_outcome

    return exit_code(agent_outcome(ending))


def keep_failure(
    data_dir: Path, question: str, failure: events.Failed, stats: events.Stats | None
) -> None:
    """A failed run's partial answer and gathered tool results, in a file named on stderr."""
    if not failure.partial_answer and not failure.kept_results:
        return  # nothing was produced: nothing to keep
    record = {
        "question": question,
        "error": failure.message,
        "partial_answer": failure.partial_answer,
        "kept_results": [r.model_dump() for r in failure.kept_results],
        "stats": payload(stats) if stats else None,
    }
    keep_and_say(data_dir, "agent", record)


def _echoes_instructions(text: str) -> bool:
    from reqstudio.modes.agent.checks import (
        echoes_instructions,  # with the engine, when a run shows
    )

    return echoes_instructions(text)


class AgentWords(Words):
    """The Agent's events in words: the steps on stderr, the answer on stdout once it is whole.
    `echoed`: the "answer" only gave back the app's instructions (and was not printed)."""

    def __init__(self) -> None:
        self.echoed = False

    def answer(self, event: BaseEvent) -> str | None:
        if not isinstance(event, events.AnswerFinished):
            return None  # the answer's tokens are not written: the whole answer is
        if _echoes_instructions(event.text):
            # As in the app: the model gave back the app's own instructions (a small model
            # may repeat the hand-over text); that is no answer and is not printed as one.
            self.echoed = True
            return None
        return event.text + "\n"

    def lines(self, event: BaseEvent) -> Said:
        match event:
            case events.ThinkingStarted(model=model, round=number):
                return Inline(f"\n[thinking · {model} · round {number}] ")
            case events.ThinkingToken(text=text):
                return Inline(text)
            case events.ThinkingFinished():
                return ""
            case events.ToolCallStarted(tool=tool, arguments=arguments, kind=kind):
                return f"→ {tool} ({kind}) {json.dumps(arguments, ensure_ascii=False)}"
            case events.ToolCallFinished() as done:
                return result_lines(done)
            case events.Decision(continue_=go_on, reason=reason):
                return f"[{'continue' if go_on else 'stop'}] {reason}"
            case events.LoopDetected(message=message):
                return f"[loop] {message}"
            case events.HandOver(answer_model=model, limit=limit):
                note = f" (limit: {limit})" if limit else ""
                return f"[answer · {model}]{note}"
            case events.AnswerRestarted(attempt=attempt):
                return f"[answer] try {attempt}: the broken try is dropped"
            case events.AnswerFinished() if self.echoed:
                return (
                    "reqstudio: the answer model gave back the app's own instructions instead "
                    "of an answer; nothing was printed"
                )
            case events.Failed(message=message, kept_results=kept, partial_answer=partial):
                said = [f"reqstudio: {message}"]
                if partial:
                    said.append(f"  partial answer (not complete): {partial}")
                said += [f"  kept: {r.tool} {json.dumps(r.arguments)}" for r in kept]
                return said
            case events.Stats() as stats:
                return stats_line(stats)
        return None


def result_lines(done: events.ToolCallFinished) -> list[str]:
    if not done.ok:
        first_line = (done.result_text.strip().splitlines() or [""])[0]
        return [f"✗ {done.tool} failed: {first_line[:200]}"]
    if done.result_count is not None:
        cached = ", cached" if done.cached else ""
        return [f"← {done.tool}: {done.result_count} result(s){cached}"] + [
            f"   [{number}] {hit.title} <{hit.url}>"
            for number, hit in enumerate(done.top_results, start=1)
        ]
    preview = " ".join(done.result_text.split())[:200]
    return [f"← {done.tool}: {preview}"]


def stats_line(stats: events.Stats) -> str:
    parts = []
    for role, usage in stats.per_model.items():
        unfinished = f" + {usage.unfinished} stopped unfinished" if usage.unfinished else ""
        tokens = f"{usage.input_tokens}+{usage.output_tokens}"
        parts.append(
            f"{role} {usage.model}: {usage.calls} call(s){unfinished}, "
            f"{tokens if usage.tokens_known else 'unknown'} tokens, {usage.seconds:.1f} s"
        )
    cost = "" if stats.estimated_cost is None else f", ~{stats.estimated_cost:.4f}"
    phases = stats.phase_seconds
    total = stats.total_tokens if stats.tokens_known else "unknown"
    return (
        f"[stats] {'; '.join(parts) or 'no model calls'}; total {total} "
        f"tokens{cost}; tools {phases['tools']:.1f} s, answer {phases['answer']:.1f} s"
    )
