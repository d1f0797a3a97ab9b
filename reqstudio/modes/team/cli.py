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
from typing import TYPE_CHECKING, TextIO

from reqstudio import cli as harness
from reqstudio.modes.team import events

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
    printer = EventPrinter(sys.stderr, sys.stdout)
    if team.store is not None:
        printer.line(f"[run] {team.run_id} · saved as it happens in {team.store.path}")
    interrupted = on_ctrl_c(team)
    finished: events.RunFinished | None = None
    try:
        async for event in team.events(args.task):
            printer.show(event)
            if isinstance(event, events.RunFinished):
                finished = event
    finally:
        restore_ctrl_c()
        if args.log is not None:
            await write_log(team, args.log)
    if interrupted.is_set():
        return harness.EXIT_INTERRUPTED
    return team_exit_code(finished)


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


class EventPrinter:
    """Events as readable lines on `log`; root's answer streams to `answer`."""

    def __init__(self, log: TextIO, answer: TextIO):
        self.log = log
        self.answer = answer
        self.streamed = ""
        self.answers: list[int | None] = []

    def line(self, text: str) -> None:
        print(text, file=self.log, flush=True)

    def show(self, event: events.TeamEvent) -> None:
        match event:
            case events.RoleCreated(by=by, role_name=name, interface_spec=spec):
                self.line(f"[role] {by} created {name}{' (with interface spec)' if spec else ''}")
            case events.AgentSpawned(parent=parent, agent_id=agent_id, role_name=name, brief=brief):
                if parent is None:
                    self.line(f"[spawn] {agent_id} ({name})")
                else:
                    constraints = "; ".join((brief or {}).get("constraints", []))
                    self.line(
                        f"[spawn] {parent} → {agent_id} ({name}): "
                        f"{one_line((brief or {}).get('objective', ''))} | constraints: {constraints}"
                    )
            case events.MessageDelivered(message=m, first_contact=first):
                new = " (first contact)" if first else ""
                self.line(
                    f"[message] {m['from']} → {m['to']} {m['message_type']}{new}: "
                    f"{one_line(m['content'] or json.dumps(m['payload'], ensure_ascii=False))}"
                )
            case events.Introduced(requester=who, target=target, introducer=by, forwarded_from=via):
                hop = f" (forwarded from {via})" if via else ""
                self.line(f"[introduction] {by} introduced {target} to {who}{hop}")
            case events.Refused(agent_id=agent_id, tool=tool, code=code, message=message):
                self.line(f"[refused] {agent_id} {tool}: {code}: {one_line(message)}")
            case events.LimitReached(limit=limit, detail=detail):
                self.line(f"[limit] {limit}: {detail}")
            case events.AgentFailed(agent_id=agent_id, error=error):
                self.line(f"[failed] {agent_id}: {error}")
            case events.TurnFinished(agent_id=agent_id, model_calls=calls, tool_calls=tools):
                self.line(f"[turn] {agent_id}: {calls} model call(s), {tools} tool call(s)")
            case events.AnswerToken(text=text, message_id=message_id):
                # one delivered message to the user, whole; answers are separated by a line
                if self.answers:
                    self.answer.write("\n")
                self.answers.append(message_id)
                self.streamed += text
                self.answer.write(text)
                self.answer.flush()
            case events.RunFinished() as done:
                self.finish(done)

    def finish(self, done: events.RunFinished) -> None:
        if done.answer and not self.answers:  # a record replayed without its tokens
            self.answer.write(done.answer)
            self.answers.append(None)
        if self.answers:
            self.answer.write("\n")
            self.answer.flush()
        if done.root_note:
            self.line(f"[root said, without answering the user] {one_line(done.root_note, 400)}")
        self.line(f"[end] {done.reason}: {done.detail} ({done.seconds:.1f} s)")
        for s in done.agents:
            self.line(
                f"[stats] {s.agent_id} {s.role_name}: {s.messages_sent} sent, "
                f"{s.messages_received} received, {s.tool_calls} tool calls, "
                f"{s.input_tokens}+{s.output_tokens} tokens, {s.seconds:.1f} s"
            )
