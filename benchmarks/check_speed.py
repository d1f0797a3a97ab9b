"""How fast `reqstudio check` is on large documents: requirements per second at 1k, 10k and
50k requirements, for `check_document` in this process and for the CLI (`reqstudio check
FILE --json`, start-up included).

    PYTHONPATH=. python benchmarks/check_speed.py [--sizes 1000 10000 50000] [--cli] [--runs 3]

The documents are generated (`synthetic_document`, seeded, the same on every machine): a
glossary, sections of twenty requirements with ids, references to other ids, acronyms,
pronouns, bounds and vague words, and a Chinese requirement now and then, so that every rule
and every cross-requirement check (ids, references, acronyms; duplicates, near-duplicates,
conflicts, term and unit drift) has work to do. The column "across requirements" times
those last five alone (`reqstudio.check.cross.cross_findings`), which `check_document` runs."""

from __future__ import annotations

import argparse
import gc
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reqstudio.check.cross import cross_findings  # noqa: E402
from reqstudio.check.engine import check_document  # noqa: E402
from reqstudio.check.parse import parse_requirements  # noqa: E402

SEED = 36
# a vocabulary wide enough that requirements rarely repeat (caches must not flatter the time)
NOUNS = [
    "account", "alarm", "archive", "audit", "backup", "batch", "bridge", "buffer", "cache",
    "camera", "card", "channel", "checksum", "client", "cluster", "command", "connection",
    "console", "counter", "dashboard", "database", "device", "display", "document",
    "driver", "engine", "entry", "event", "feed", "field", "file", "filter", "folder",
    "frame", "gateway", "grid", "handler", "image", "index", "input", "interface",
    "invoice", "item", "job", "journal", "key", "label", "layer", "ledger", "license",
    "link", "list", "lock", "log", "mailbox", "manifest", "map", "message", "meter", "mode",
    "module", "monitor", "network", "node", "notice", "order", "packet", "page", "panel",
    "parameter", "password", "path", "payload", "pipeline", "policy", "port", "printer",
    "profile", "protocol", "queue", "record", "region", "register", "relay", "report",
    "request", "role", "route", "rule", "sample", "schedule", "schema", "screen", "script",
    "sensor", "server", "service", "session", "setting", "signal", "slot", "snapshot",
    "socket", "source", "station", "status", "storage", "stream", "switch", "table", "tag",
    "task", "template", "terminal", "ticket", "timer", "token", "topic", "tracker",
    "transaction", "trigger", "unit", "update", "upload", "valve", "vehicle", "version",
    "view", "volume", "warning", "window", "workflow", "zone"
]  # fmt: skip
VERBS = [
    "accept", "add", "allow", "archive", "assign", "block", "calculate", "cancel",
    "capture", "change", "check", "clear", "close", "collect", "compare", "compress",
    "compute", "confirm", "connect", "convert", "copy", "count", "create", "decode",
    "delete", "deliver", "detect", "disable", "display", "download", "edit", "enable",
    "encode", "encrypt", "export", "fetch", "filter", "format", "forward", "generate",
    "hide", "import", "index", "inform", "insert", "install", "limit", "load", "lock",
    "log", "mark", "measure", "merge", "monitor", "move", "notify", "open", "parse",
    "pause", "print", "process", "publish", "purge", "queue", "read", "receive", "record",
    "refresh", "register", "reject", "reload", "remove", "rename", "render", "repair",
    "replace", "report", "request", "reset", "resolve", "restore", "resume", "retrieve",
    "return", "rotate", "route", "save", "scan", "schedule", "search", "select", "send",
    "show", "sort", "split", "start", "stop", "store", "submit", "sync", "tag", "track",
    "transfer", "transmit", "trigger", "unlock", "update", "upload", "validate", "verify",
    "write"
]  # fmt: skip
ADJECTIVES = [
    "active", "local", "remote", "primary", "secondary", "encrypted", "signed", "pending",
    "archived", "daily", "hourly", "monthly", "internal", "external", "digital", "optical",
    "manual", "automatic", "redundant", "default", "temporary", "permanent", "public",
    "private", "shared", "visible", "hidden", "valid", "invalid"
]  # fmt: skip
VAGUE = [
    "appropriate", "sufficient", "several", "various", "fast", "simple", "user-friendly",
    "normal", "other", "necessary", "current", "high", "large", "minimal", "efficient"
]  # fmt: skip
ACRONYMS = ["CRC", "API", "AES", "GPS", "HMI", "PLC", "SCADA", "RTU"]
ZH_TEMPLATES = [
    "系统应在{n}秒内保存{noun}记录。",
    "当操作员提交请求时，系统应尽快响应，并且它应记录结果。",
    "系统不得删除用户的数据，除非管理员批准。",
    "在维护模式下，系统应提供友好的界面和若干报表。",
]


def _phrase(rng: random.Random) -> str:
    """A noun phrase: a determiner, now and then an adjective or a vague word, a noun or two."""
    words = [rng.choice(["the", "the", "each", "a", "all", "every"])]
    if rng.random() < 0.4:
        words.append(rng.choice(ADJECTIVES))
    if rng.random() < 0.15:
        words.append(rng.choice(VAGUE))
    if rng.random() < 0.1:
        words.append(rng.choice(ACRONYMS))
    words.append(rng.choice(NOUNS))
    if rng.random() < 0.3:
        words.append(rng.choice(NOUNS) + "s")
    return " ".join(words)


def _requirement(rng: random.Random, number: int, total: int) -> str:
    """One requirement of one to three clauses, seeded."""
    clauses = []
    if rng.random() < 0.3:
        clauses.append(f"{rng.choice(['When', 'If', 'While', 'Where'])} {_phrase(rng)} is "
                       f"{rng.choice(VERBS)}ed,")  # fmt: skip
    modal = rng.choice(["shall", "shall", "shall", "must", "shall not", "should"])
    subject = _phrase(rng)
    subject = subject if clauses else subject[0].upper() + subject[1:]
    clauses.append(f"{subject} {modal} {rng.choice(VERBS)} {_phrase(rng)}")
    extra = rng.random()
    if extra < 0.25:
        clauses.append(f"within {rng.randint(1, 900)} {rng.choice(['ms', 'seconds', 'minutes'])}")
    elif extra < 0.45:
        reference = rng.randint(1, max(1, number - 1)) if rng.random() < 0.9 else total + number
        clauses.append(f"as specified in FR-{reference:05d}")
    elif extra < 0.6:
        clauses.append(f"and {rng.choice(VERBS)} it to {_phrase(rng)}")
    elif extra < 0.7:
        clauses.append(f"{rng.choice(['more', 'at least', 'no later'])} than {_phrase(rng)}")
    if rng.random() < 0.2:
        clauses.append(f"for {_phrase(rng)} of {_phrase(rng)} (see {rng.choice(ACRONYMS)})")
    return " ".join(clauses) + "."


def synthetic_document(requirements: int, seed: int = SEED) -> str:
    """A Markdown SRS with `requirements` requirements (ids FR-00001 ...), seeded."""
    rng = random.Random(seed)
    lines = ["# Synthetic SRS", "", "## 1 Glossary", ""]
    lines += [f"- {acronym}: {acronym.lower()} in full" for acronym in ACRONYMS[:5]]
    lines.append("")
    for number in range(1, requirements + 1):
        if number % 20 == 1:
            lines += ["", f"## 3.{number // 20 + 1} Feature {number // 20 + 1}", ""]
        if rng.random() < 0.05:
            text = rng.choice(ZH_TEMPLATES).format(n=rng.randint(1, 60), noun=rng.choice(NOUNS))
        else:
            text = _requirement(rng, number, requirements)
        lines.append(f"- FR-{number:05d}: {text}")
    return "\n".join(lines) + "\n"


def time_engine(requirements: int) -> tuple[float, float, int]:
    """(wall seconds, processor seconds, requirements read) of `check_document` on the
    synthetic document."""
    text = synthetic_document(requirements)
    started, cpu = time.perf_counter(), time.process_time()
    report = check_document(text)
    return time.perf_counter() - started, time.process_time() - cpu, len(report.requirements)


def time_cross(requirements: int) -> float:
    """Processor seconds of the checks across requirements alone on the synthetic document."""
    parsed = parse_requirements(synthetic_document(requirements)).requirements
    gc.disable()  # as check_document does while it checks
    try:
        cpu = time.process_time()
        cross_findings(parsed)
        return time.process_time() - cpu
    finally:
        gc.enable()


def time_cli(requirements: int) -> tuple[float, float]:
    """(wall seconds, processor seconds) of `reqstudio check FILE --json` in a process of
    its own, start-up included."""
    text = synthetic_document(requirements)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "srs.md"
        path.write_text(text, encoding="utf-8")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "reqstudio.cli", "check", str(path), "--json"],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            check=False,
        )
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(done.stderr.decode())
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--cli", action="store_true", help="time `reqstudio check --json` too")
    parser.add_argument("--runs", type=int, default=1, help="the best of N runs (default 1)")
    args = parser.parse_args(argv)
    # wall-clock time depends on what else the machine runs; processor time much less
    header = (
        "| requirements | check_document: s (CPU s) | requirements/s | across requirements: CPU s |"
    )
    header += " CLI --json: s (CPU s) | CLI requirements/s |" if args.cli else ""
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print(header)
    print("|---|---|---|---|" + ("---|---|" if args.cli else ""))
    for size in args.sizes:
        runs = [time_engine(size) for _ in range(args.runs)]
        seconds, cpu, read = min(runs)
        if read != size:
            raise SystemExit(f"read {read} of {size} requirements")
        across = min(time_cross(size) for _ in range(args.runs))
        row = f"| {size:,} | {seconds:.2f} ({cpu:.2f}) | {size / seconds:,.0f} | {across:.2f} |"
        if args.cli:
            cli, cli_cpu = min(time_cli(size) for _ in range(args.runs))
            row += f" {cli:.2f} ({cli_cpu:.2f}) | {size / cli:,.0f} |"
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
