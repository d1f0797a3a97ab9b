"""The load benchmark still runs and writes its figures under their names:
two users at a tiny size, every mode, the real app and the scripted model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from benchmarks.load_benchmark import nginx_config

ROOT = Path(__file__).resolve().parent.parent
FIGURES = (
    "users", "ratio", "mean_s_per_user", "p50_stall_ms", "p99_stall_ms", "max_stall_ms",
    "cpu_s_per_user", "cpu_s_per_1000_tokens", "streamed_tokens", "peak_rss_mb", "errors",
    "load_average",
)  # fmt: skip


def test_two_tiny_users_give_every_named_figure_and_the_one_user_baseline(tmp_path: Path):
    out = tmp_path / "load.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    env["PYTHONPATH"] = str(ROOT)
    run = subprocess.run(
        [sys.executable, "benchmarks/load_benchmark.py", "--users", "2", "--answer-chars", "60",
         "--document-chars", "160", "--chunk-rate", "400", "--latency", "0.02",
         "--srs-rounds", "1", "--chat-turns", "1", "--no-warm-up", "--json", str(out), "--markdown", ""],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    figures = json.loads(out.read_text())
    assert figures["nproc"] == os.cpu_count() and len(figures["load_average_before"]) == 3
    assert [level["users"] for level in figures["levels"]] == [1, 2]  # 1 measured unasked
    for level in figures["levels"]:
        assert set(FIGURES) <= set(level), set(FIGURES) - set(level)
        assert level["errors"] == [], level["errors"]
        assert level["streamed_tokens"] > 0 and level["max_stall_ms"] >= level["p99_stall_ms"]
    assert figures["levels"][0]["ratio"] == 1.0
    assert "ratio" in run.stdout and "p99" in run.stdout


def test_the_nginx_front_is_the_readme_s_example_with_this_run_s_instances(tmp_path: Path):
    config = nginx_config([8101, 8102], 9100, tmp_path)
    assert "ip_hash;" in config and "proxy_set_header Upgrade $http_upgrade;" in config
    assert "server 127.0.0.1:8101;" in config and "server 127.0.0.1:8102;" in config
    assert "app1.internal" not in config and "listen 127.0.0.1:9100;" in config
