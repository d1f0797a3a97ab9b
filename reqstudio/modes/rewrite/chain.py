"""`RewriteChain` (seed 003, section 4.3): a request and an optional progress handler in, a
`RewriteResult` out. The same engine serves the CLI, the browser and the tests.

With a checkpointer every finished node (each written section among them) is saved under the
run's id, so a run that fails or is stopped resumes from there (`resume=True`). A finished
run's checkpoints are deleted: its result carries everything."""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from contextlib import aclosing
from typing import Any, TypeVar

from langgraph.checkpoint.base import BaseCheckpointSaver

from reqstudio.events import BaseEvent, Send, sent_events
from reqstudio.failures import Failure, FailureCode, render
from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite.callbacks import ProgressCallbackHandler, deliver
from reqstudio.modes.rewrite.errors import RewriteStageError, RewriteTooLarge, failure_for
from reqstudio.modes.rewrite.events import RunFailed, RunFinished, StageFailed
from reqstudio.modes.rewrite.graph import build_graph, recursion_limit
from reqstudio.modes.rewrite.models import (
    DocumentStructure,
    PatchFailure,
    ReviewRound,
    RewriteRequest,
    RewriteResult,
)
from reqstudio.modes.rewrite.reviewers import SectionReviewer, reviewer_for
from reqstudio.modes.rewrite.sizes import context_sizes
from reqstudio.modes.rewrite.state import RewriteContext, RewriteOptions, initial_state
from reqstudio.usage import UsageTracker

T = TypeVar("T")

log = logging.getLogger("reqstudio.rewrite")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run `coroutine` on one event loop kept for this process's synchronous calls.

    langchain-openai caches its async HTTP client per endpoint, bound to the loop that first
    used it; a fresh `asyncio.run` per call would break the second call in a process."""
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(target=_loop.run_forever, name="rewrite-sync", daemon=True).start()
    finished = threading.Event()

    async def run_to_the_end() -> T:
        try:
            return await coroutine
        finally:
            finished.set()

    future = asyncio.run_coroutine_threadsafe(run_to_the_end(), _loop)
    try:
        return future.result()
    except KeyboardInterrupt:
        # Ctrl-C: stop the run there too and let it end its open stage (the handler is told)
        # before this process exits; the finished steps stay in the checkpoint.
        future.cancel()
        finished.wait(timeout=10)
        raise


class RewriteResumeError(ValueError):
    """No saved run to resume under that id (never saved, finished, or deleted)."""


def default_factory() -> tuple[ModelFactory, Any]:
    """The factory the settings describe (`.env`, `OPENAI_*`), and the runtime to stop later
    (it runs the embedded model when no provider is configured)."""
    from reqstudio.runtime import AppRuntime
    from reqstudio.settings import load_settings

    runtime = AppRuntime(load_settings())
    runtime.start()
    return runtime.factory(), runtime


class RewriteChain:
    """Outline first, then section by section, then reviewed and patched.

    `factory`: builds the models (default: from the settings, as `RewriteChain()` in the seed).
    `reviewer`: who reviews in stage three (default: the single review expert); anything with
    the `SectionReviewer` shape fits, e.g. Review mode's panel behind an adapter.
    Options default to the settings (`REWRITE_MAX_REVIEW_ROUNDS`); retries and format repairs
    follow each role's policy in `reqstudio.calls`.
    """

    def __init__(
        self,
        factory: ModelFactory | None = None,
        *,
        reviewer: SectionReviewer | None = None,
        options: RewriteOptions | None = None,
    ):
        if factory is None:
            factory, runtime = default_factory()
            weakref.finalize(self, runtime.stop)
        settings = factory.settings
        self.factory = factory
        self.options = options or RewriteOptions(
            max_review_rounds=settings.rewrite_max_review_rounds
        )
        self.reviewer = reviewer or reviewer_for(factory)
        self.graph = build_graph(self.options.max_review_rounds)

    def _config(self, run_id: str) -> dict[str, Any]:
        return {
            "configurable": {"thread_id": run_id},
            "recursion_limit": recursion_limit(self.options.max_review_rounds),
        }

    async def pending(self, checkpointer: BaseCheckpointSaver, run_id: str) -> str | None:
        """The node a saved, unfinished run stopped before (what resuming runs first), else
        None (nothing saved under `run_id`, or that run finished)."""
        snapshot = await build_graph(self.options.max_review_rounds, checkpointer).aget_state(
            self._config(run_id)
        )
        if not snapshot.values or not snapshot.next:
            return None
        return snapshot.next[0]

    async def ainvoke(
        self,
        request: RewriteRequest | None,
        callback_handler: ProgressCallbackHandler | None = None,
        *,
        tracker: UsageTracker | None = None,
        checkpointer: BaseCheckpointSaver | None = None,
        run_id: str | None = None,
        resume: bool = False,
    ) -> RewriteResult:
        """Raises `RewriteStageError` (naming the stage, the section and the finish reason,
        with the partial document and the `run_id` to resume) on failure, `RewriteTooLarge`
        before the first call when the background alone exceeds the model's context.

        `resume=True` continues the saved run `run_id` (its request is in the checkpoint;
        `request` may be None). A result whose patches partly failed, or whose review lacked a
        reviewer, has `complete=False` (`stop_reason` says which).

        `callback_handler` receives the run's events as the seed's calls (`deliver`)."""

        async def emit(event: BaseEvent) -> None:
            await deliver(callback_handler, event)

        return await self.arun(
            request, emit, tracker=tracker, checkpointer=checkpointer, run_id=run_id,
            resume=resume,
        )  # fmt: skip

    async def arun(
        self,
        request: RewriteRequest | None,
        emit: Callable[[BaseEvent], Awaitable[None]],
        *,
        tracker: UsageTracker | None = None,
        checkpointer: BaseCheckpointSaver | None = None,
        run_id: str | None = None,
        resume: bool = False,
    ) -> RewriteResult:
        """As `ainvoke`, each of the run's events awaited by `emit` as it happens (the events
        of a stage that a cancellation ends too, which a closed `astream` cannot yield)."""
        tracker = tracker if tracker is not None else UsageTracker()
        started = time.perf_counter()
        context = RewriteContext(
            factory=self.factory,
            tracker=tracker,
            reviewer=self.reviewer,
            options=self.options,
            emit=emit,
        )
        graph = build_graph(self.options.max_review_rounds, checkpointer)
        if checkpointer is not None and run_id is None:
            run_id = uuid.uuid4().hex
        config = self._config(run_id or "unsaved")
        if resume:
            if checkpointer is None or run_id is None:
                raise ValueError("resuming needs the checkpointer and the run_id of the run")
            if await self.pending(checkpointer, run_id) is None:
                raise RewriteResumeError(f"no unfinished rewrite run is saved as {run_id!r}")
            graph_input = None
        else:
            if request is None:
                raise ValueError("a new run needs a RewriteRequest")
            sizes = context_sizes(request, self.factory)
            if not sizes.fits:
                too_large = Failure(FailureCode.REWRITE_TOO_LARGE, sizes.values)
                raise RewriteTooLarge(too_large, sizes.first, sizes.limit)
            if sizes.draft_may_not_fit:
                log.warning("rewrite: the later requests may not fit: %s", sizes.describe("en"))
            graph_input = initial_state(request.original_content, request.clarifications)
        state: dict[str, Any] = dict(graph_input or {})
        try:
            stream = graph.astream(
                graph_input,
                config,
                context=context,
                stream_mode="values",
                # Save each node before the next starts: a stop loses at most the running one.
                durability="sync" if checkpointer is not None else None,
            )
            async with aclosing(stream):  # closed in this task, however the loop ends
                async for values in stream:
                    state = values
                    if checkpointer is not None and run_id is not None:
                        await prune_checkpoints(checkpointer, run_id)
        except RewriteStageError as error:
            error.run_id = run_id
            await self._close_stage(context, error, error.reason, error.section_id, error.failure)
            raise
        except asyncio.CancelledError as error:
            cancelled = Failure(FailureCode.CANCELLED)
            await self._close_stage(context, error, render(cancelled, "en"), None, cancelled)
            raise
        except Exception as error:
            failure = failure_for(error)
            await self._close_stage(context, error, render(failure, "en"), None, failure)
            raise
        if checkpointer is not None and run_id is not None:
            await checkpointer.adelete_thread(run_id)
        document = state.get("document_structure")
        if document is None:  # cannot happen: the graph ends after filling
            raise RewriteStageError("content_filling", "no document was produced")
        failed = [PatchFailure.model_validate(f) for f in state.get("failed_patches", [])]
        rounds = [ReviewRound.model_validate(r) for r in state["review_rounds"]]
        return RewriteResult(
            structured_document=DocumentStructure.model_validate(document),
            review_rounds=rounds,
            usage=tracker.as_dict(),
            seconds=round(time.perf_counter() - started, 3),
            complete=not failed,  # and not when a reviewer failed (`RewriteResult`)
            failed_patches=failed,
            run_id=run_id,
        )

    @staticmethod
    async def _close_stage(
        context: RewriteContext,
        error: BaseException,
        reason: str,
        section_id: str | None,
        failure: Failure | None,
    ) -> None:
        """Whatever ends the run, the stage the handler was told started ends visibly."""
        stage = context.open_stage
        if stage is None:
            return
        context.open_stage = None
        await context.send(
            StageFailed(
                step=stage,
                reason=reason,
                failure=failure.as_dict() if failure is not None else {},
                error=error,
                section_id=section_id,
            )
        )

    async def astream(
        self,
        request: RewriteRequest | None,
        *,
        tracker: UsageTracker | None = None,
        checkpointer: BaseCheckpointSaver | None = None,
        run_id: str | None = None,
        resume: bool = False,
    ) -> AsyncIterator[BaseEvent]:
        """The run as the one event stream: the stages' events as they happen, then
        `RunFinished` with the result or `RunFailed` with the error (which carries the partial
        document and the run id to resume). Closing the stream early stops the run."""

        async def work(send: Send) -> RunFinished:
            result = await self.arun(
                request, send, tracker=tracker, checkpointer=checkpointer, run_id=run_id,
                resume=resume,
            )  # fmt: skip
            return RunFinished(result=result)

        async for event in sent_events(work, _failed):
            yield event

    def invoke(
        self,
        request: RewriteRequest | None,
        callback_handler: ProgressCallbackHandler | None = None,
        **kwargs: Any,
    ) -> RewriteResult:
        return run_sync(self.ainvoke(request, callback_handler, **kwargs))


def _failed(error: Exception) -> RunFailed:
    """`RunFailed` for what the run raised: a stage error keeps its partial document."""
    partial = getattr(error, "partial", None)
    return RunFailed(code=type(error).__name__, partial=partial, error=error)


async def prune_checkpoints(checkpointer: BaseCheckpointSaver, run_id: str) -> None:
    """Only the latest checkpoint of a running rewrite is kept (resuming needs no other),
    as SRS mode does: each one holds the whole state, the original included."""
    from reqstudio.modes.srs.engine import prune_checkpoints as prune_srs_style

    await prune_srs_style(checkpointer, run_id)
