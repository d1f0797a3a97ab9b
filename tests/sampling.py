"""A figure sampled on a thread every 20 ms while a `with` block runs (database connections,
a process's memory), keeping every sample and the highest."""

from __future__ import annotations

import threading
import time
from contextlib import AbstractContextManager, nullcontext
from typing import Self


class PeakSampler:
    def __init__(self) -> None:
        self.peak = 0
        self.samples: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample_until_stopped, daemon=True)

    def sample(self) -> int:
        """The figure now (on the sampling thread)."""
        raise NotImplementedError

    def session(self) -> AbstractContextManager:
        """What the sampling thread holds while it samples (a connection, say)."""
        return nullcontext()

    def _sample_until_stopped(self) -> None:
        with self.session():
            while not self._stop.is_set():
                value = self.sample()
                self.samples.append(value)
                self.peak = max(self.peak, value)
                time.sleep(0.02)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
