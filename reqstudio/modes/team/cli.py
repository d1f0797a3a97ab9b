"""`reqstudio team "TASK"`: a team of agents works on a requirements task. Events go to
stderr as they happen, root's answer to stdout; `--log FILE` writes the whole record (JSON)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from reqstudio import cli as harness
from reqstudio.events import BaseEvent
from reqstudio.modes.team import events
from reqstudio.progress import Progress, Said, Words

if TYPE_CHECKING:
    from reqstudio.modes.team.runner import TeamRun
    from reqstudio.runtime import AppRuntime


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = harness.add_command(
        subparsers, "team", "Team mode: events are printed on stderr, root's answer on stdout."
    )
    parser.add_argument("task", help="the task for the team")
    parser.add_argument("--log", type=Path, metavar="FILE", help="write the run's record (JSON)")
    parser.add_argument("--max-agents", metavar="N", help="most agents, root included (2-32)")
    parser.add_argument("--time-limit", metavar="S", help="seconds for the whole run (1-3600)")
    parser.set_defaults(handler=run)


def bounded(flag: str, raw: str | None, low: float, high: float, kind: type = int):
    if raw is None:
        return None
    try:
        value = kind(raw)
    except ValueError:
        raise harness.UsageError(
            f"{flag} must be a number between {low:g} and {high:g}, not {raw!r}"
        ) from None
    if not low <= value <= high:
        raise harness.UsageError(f"{flag} must be between {low:g} and {high:g}, not {raw}")
    return value


def run(args: argparse.Namespace) -> int:
    # The runner, its store and the model client: imported only when the command runs.
    from reqstudio.modes.team.runner import TeamConfig, TeamRun
    from reqstudio.modes.team.store import EventStore
    from reqstudio.persistence import record_target

    if not args.task.strip():
        raise harness.UsageError("the task is empty")
    max_agents = bounded("--max-agents", args.max_agents, 2, 32)
    time_limit = bounded("--time-limit", args.time_limit, 1, 3600, float)
    harness.check_writable(args.log, "--log")
    settings = harness.load_mode_settings()
    config = TeamConfig.from_settings(
        settings, max_agents=max_agents, max_execution_time=time_limit
    )

    def with_store(runtime: AppRuntime) -> int:
        store = EventStore.at(record_target(settings))
        try:
            return asyncio.run(work(TeamRun(runtime.factory(), config, store), args))
        finally:
            store.close()

    return harness.run_mode(with_store, settings=settings)


async def work(team: TeamRun, args: argparse.Namespace) -> int:
    """Run the team; every ending (answered, a limit, a failure, Ctrl-C) prints one `[end]`
    line, keeps the record in the store and writes `--log`. Exit 0 only when root's answer
    reached the user; 4 when a limit, a loop or idleness ended the run without it; 1 when root
    failed; 130 after Ctrl-C."""
    progress = Progress(TeamWords())
    if team.store is not None:
        progress.say(f"[run] {team.run_id} · saved as it happens in {team.store.path}")
    interrupted = on_ctrl_c(team)
    try:
        async for event in team.events(args.task):
            progress.show(event)
    finally:
        restore_ctrl_c()
        if args.log is not None:
            await write_log(team, args.log)
    if interrupted.is_set():
        return harness.EXIT_INTERRUPTED
    return team_exit_code(progress.finished)


def team_exit_code(finished: events.RunFinished | None) -> int:
    """The exit code of a team run: its ending's outcome (`reqstudio.modes.team.outcome`), as the
    browser's closing mark is; no ending at all is a failure."""
    from reqstudio.modes.team.outcome import team_outcome
    from reqstudio.outcomes import Outcome

    return harness.exit_code(Outcome.FAILED if finished is None else team_outcome(finished))


def on_ctrl_c(team: TeamRun) -> asyncio.Event:
    """The first Ctrl-C stops the team the way the stop button does (the run ends as
    "stopped", with its record); a second one interrupts at once."""
    interrupted = asyncio.Event()
    loop = asyncio.get_running_loop()

    def stop() -> None:
        if interrupted.is_set():
            restore_ctrl_c()
            signal.raise_signal(signal.SIGINT)
            return
        interrupted.set()
        print("[interrupt] stopping every agent (Ctrl-C again to quit at once)", file=sys.stderr)
        team.stop()

    with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows, not main thread
        loop.add_signal_handler(signal.SIGINT, stop)
    return interrupted


def restore_ctrl_c() -> None:
    with contextlib.suppress(NotImplementedError, RuntimeError):
        asyncio.get_running_loop().remove_signal_handler(signal.SIGINT)


async def write_log(team: TeamRun, path: Path) -> None:
    try:
        record = await team.export()
        path.write_text(json.dumps(record, ensure_ascii=False, indent=2))
    except (OSError, KeyError) as exc:
        print(f"[record] could not write {path}: {exc}", file=sys.stderr)
        return
    print(f"[record] {path}", file=sys.stderr)


def one_line(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class TeamWords(Words):
    """The team's events in words on stderr; root's answer to stdout, each delivered message
    whole, a line between them."""

    def __init__(self) -> None:
        self.answered = False  # a message of root's reached the user

    def answer(self, event: BaseEvent) -> str | None:
        match event:
            case events.AnswerToken(text=text):
                separator = "\n" if self.answered else ""
                self.answered = True
                return separator + text
            case events.RunFinished(answer=answer):
                if answer and not self.answered:  # a record replayed without its tokens
                    self.answered = True
                    return answer + "\n"
                return "\n" if self.answered else None
        return None

    def lines(self, event: BaseEvent) -> Said:
        match event:
            case events.RoleCreated(by=by, role_name=name, interface_spec=spec):
                return f"[role] {by} created {name}{' (with interface spec)' if spec else ''}"
            case events.AgentSpawned(parent=parent, agent_id=agent_id, role_name=name, brief=brief):
                if parent is None:
                    return f"[spawn] {agent_id} ({name})"
                constraints = "; ".join((brief or {}).get("constraints", []))
                return (
                    f"[spawn] {parent} → {agent_id} ({name}): "
                    f"{one_line((brief or {}).get('objective', ''))} | constraints: {constraints}"
                )
            case events.MessageDelivered(message=m, first_contact=first):
                new = " (first contact)" if first else ""
                return (
                    f"[message] {m['from']} → {m['to']} {m['message_type']}{new}: "
                    f"{one_line(m['content'] or json.dumps(m['payload'], ensure_ascii=False))}"
                )
            case events.Introduced(requester=who, target=target, introducer=by, forwarded_from=via):
                hop = f" (forwarded from {via})" if via else ""
                return f"[introduction] {by} introduced {target} to {who}{hop}"
            case events.Refused(agent_id=agent_id, tool=tool, code=code, message=message):
                return f"[refused] {agent_id} {tool}: {code}: {one_line(message)}"
            case events.LimitReached(limit=limit, detail=detail):
                return f"[limit] {limit}: {detail}"
            case events.AgentFailed(agent_id=agent_id, error=error):
                return f"[failed] {agent_id}: {error}"
            case events.TurnFinished(agent_id=agent_id, model_calls=calls, tool_calls=tools):
                return f"[turn] {agent_id}: {calls} model call(s), {tools} tool call(s)"
            case events.RunFinished() as done:
                return ending_lines(done)
        return None


def ending_lines(done: events.RunFinished) -> list[str]:
    said = []
    if done.root_note:
        said.append(f"[root said, without answering the user] {one_line(done.root_note, 400)}")
    said.append(f"[end] {done.reason}: {done.detail} ({done.seconds:.1f} s)")
    said += [
        f"[stats] {s.agent_id} {s.role_name}: {s.messages_sent} sent, "
        f"{s.messages_received} received, {s.tool_calls} tool calls, "
        f"{s.input_tokens}+{s.output_tokens} tokens, {s.seconds:.1f} s"
        for s in done.agents
    ]
    return said
