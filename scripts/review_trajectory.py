"""Print a real `reqstudio review --json` trajectory for the Review page (docs/review.md): the CLI, run as a user
runs it, against the scripted OpenAI-compatible server playing the three-round scenario of
`tests/test_review_memory.py` (issues new -> persisting -> resolved).

    .venv/bin/python scripts/review_trajectory.py

The test of that scenario checks that the page shows exactly this excerpt."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.review_support import DOCUMENT  # noqa: E402
from tests.scripted_server import ScriptedLLMServer  # noqa: E402


def line(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def trajectory_excerpt(data: dict[str, Any]) -> str:
    """The parts of reviews.json a reader follows, one object a line (no timings, no usage)."""
    rounds = [
        {
            "round": r["round"],
            "stop_reason": (r["decision"] or {}).get("reason"),
            "focus_on": (r["decision"] or {}).get("focus_on", []),
            "revisions": {
                v["agent_id"]: v.get("outcome", "changed" if v["before"] != v["after"] else "")
                for v in r["revisions"]
            },
            "checks": {c["check_id"]: c["holds"] for c in r["checks"]},
        }
        for r in data["rounds"]
    ]
    issues = [
        {k: i[k] for k in ("id", "agent_id", "priority", "first_seen", "status_by_round")}
        for i in data["issues"]
    ]
    best = data["best_version"] or {}
    parts = [
        '"stop_reason": ' + line(data["stop_reason"]),
        '"trajectory": ' + line(data["trajectory"]),
        '"issues": [\n  ' + ",\n  ".join(line(i) for i in issues) + "\n]",
        '"versions": [\n  ' + ",\n  ".join(line(v) for v in data["versions"]) + "\n]",
        '"best_version": ' + line({"round": best.get("round"), "reason": best.get("reason")}),
        '"rounds": [\n  ' + ",\n  ".join(line(r) for r in rounds) + "\n]",
    ]
    return "{\n" + ",\n".join(parts) + "\n}"


def run_scenario(server: ScriptedLLMServer, folder: Path) -> dict[str, Any]:
    from tests.test_review_memory import three_rounds

    document = folder / "clinic.md"
    document.write_text(DOCUMENT, encoding="utf-8")
    reviews = folder / "reviews.json"
    server.script(*three_rounds())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env.update(
        OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-test-not-a-real-key",
        OPENAI_MODEL="scripted-model", OPENAI_TIMEOUT="10", PYTHONIOENCODING="utf-8",
        REQSTUDIO_DATA_DIR=str(folder / "data"), REQSTUDIO_RETRY_BACKOFF_SCALE="0.01",
        PYTHONPATH=os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )  # fmt: skip
    done = subprocess.run(
        [str(Path(sys.executable).with_name("reqstudio")), "review", "--doc", str(document),
         "--json", str(reviews)],
        cwd=folder, env=env, capture_output=True, text=True, encoding="utf-8", timeout=120,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return json.loads(reviews.read_text(encoding="utf-8"))


def main() -> int:
    with ScriptedLLMServer() as server, tempfile.TemporaryDirectory() as folder:
        print(trajectory_excerpt(run_scenario(server, Path(folder))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
