"""The running engine environment (app or CLI): settings, the model endpoint, the embedded model."""

from __future__ import annotations

import gc
import logging
import os
import secrets
from pathlib import Path

from reqstudio.llm import Endpoint, ModelFactory, ThreadModel, endpoint_from_settings
from reqstudio.local_model import EmbeddedModelServer
from reqstudio.settings import Settings

log = logging.getLogger("reqstudio")


class AppRuntime:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.embedded: EmbeddedModelServer | None = None
        self._endpoint: Endpoint | None = None

    def start(self) -> None:
        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        if self.settings.uses_embedded_model:
            self.embedded = EmbeddedModelServer(
                threads=self.settings.local_model_threads,
                log_file=self.settings.data_dir / "embedded-model.log",
                model_file=self.settings.local_model_file,
            )
            base_url = self.embedded.start()
            log.info("No provider configured: the offline demo model answers (%s)", base_url)
            self._endpoint = endpoint_from_settings(self.settings, base_url)
        else:
            self._endpoint = endpoint_from_settings(self.settings)
            log.info("Model provider: %s", self._endpoint.display_name)
        judge = self.factory().endpoint_for("evaluation")
        if judge != self._endpoint:
            log.info("Evaluation model (judge): %s", judge.display_name)

    def stop(self) -> None:
        if self.embedded is not None:
            self.embedded.stop()

    @property
    def endpoint(self) -> Endpoint:
        if self._endpoint is None:
            raise RuntimeError("the app runtime has not started")
        return self._endpoint

    def factory(self, thread: ThreadModel | None = None) -> ModelFactory:
        """The model factory; `thread` is a thread's own model and temperature (the app's
        settings panel), applied to every model that thread's run builds."""
        return ModelFactory(self.settings, self.endpoint, thread)

    def __enter__(self) -> AppRuntime:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def keep_data_private(data_dir: Path) -> None:
    """The data folder holds every user's threads, uploads, checkpoints and the login secret:
    only the account running the app may read it. Files created from now on (SQLite and its
    WAL files, uploads, downloads) are owner-only (umask 077); a folder made by an older
    version is tightened at start-up, with what lies directly in it."""
    os.umask(0o077)
    data_dir.mkdir(parents=True, exist_ok=True)
    for path in (data_dir, *data_dir.iterdir()):
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            path.chmod(mode & 0o700)


def ensure_auth_secret(data_dir: Path) -> None:
    """Chainlit signs its login tokens with CHAINLIT_AUTH_SECRET; keep one in the data dir."""
    if os.environ.get("CHAINLIT_AUTH_SECRET"):
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    secret_file = data_dir / "auth_secret"
    if not secret_file.exists():
        secret_file.write_text(secrets.token_urlsafe(48))
        secret_file.chmod(0o600)
    os.environ["CHAINLIT_AUTH_SECRET"] = secret_file.read_text().strip()


# The collector's first threshold: net allocations between young collections (CPython: 700).
YOUNG_COLLECTION_EVERY = 10_000


def tune_garbage_collector() -> None:
    """Tune the garbage collector for serving many users from one event loop.

    - Everything alive after start-up (modules, schemas, compiled graphs) is moved out of the
      collector's reach: a full collection walks only what users' sessions made. Without
      this, one collection stopped the event loop for about 250 ms at 20 users.
    - Young collections come every 10 000 net allocations instead of 700. At 700, under
      token streams, objects that live for one chunk or one request (coroutines, tasks,
      timer handles, futures) survived two young collections and were promoted to the oldest
      generation, which every full collection walks while the loop waits: the longest
      collection at 20 users was 102-121 ms on this 2-core machine, 41-51 ms after (the load
      benchmark, README). A young collection walks at most about 10 000 recent objects."""
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, older, oldest)
