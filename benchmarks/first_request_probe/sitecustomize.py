"""A probe for benchmarks/startup_benchmark.py, on the PYTHONPATH of the runs it measures only:
the process's CPU seconds when it first connects to the scripted server's port, written to the
file BENCH_FIRST_CPU_FILE names. CPU seconds vary far less than wall time on a busy machine."""

import os
import sys
import time

_FILE = os.environ.get("BENCH_FIRST_CPU_FILE")
_PORT = os.environ.get("BENCH_SERVER_PORT")

if _FILE and _PORT:
    _seen: list[bool] = []

    def _probe(event: str, args: tuple) -> None:
        if event != "socket.connect" or _seen:
            return
        address = args[1]
        if isinstance(address, tuple) and len(address) >= 2 and str(address[1]) == _PORT:
            _seen.append(True)
            with open(_FILE, "w", encoding="utf-8") as file:
                file.write(f"{time.process_time()}\n")

    sys.addaudithook(_probe)
