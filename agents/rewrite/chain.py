"""`RewriteChain` (seed 003, section 4.3): a request and an optional progress handler in, a
`RewriteResult` out. The same engine serves the CLI, the browser and the tests."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

from agents.rewrite.callbacks import ProgressCallbackHandler
from agents.rewrite.errors import RewriteStageError
from agents.rewrite.graph import build_graph, recursion_limit
from agents.rewrite.models import RewriteRequest, RewriteResult
from agents.rewrite.reviewers import SectionReviewer, reviewer_for
from agents.rewrite.state import RewriteContext, RewriteOptions, initial_state
from reqstudio.llm import ModelFactory
from reqstudio.usage import UsageTracker

T = TypeVar("T")

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
    return asyncio.run_coroutine_threadsafe(coroutine, _loop).result()


class RewriteChain:
    """Outline first, then section by section, then reviewed and patched.

    `reviewer`: who reviews in stage three (default: the single review expert); anything with
    the `SectionReviewer` shape fits, e.g. Review mode's panel behind an adapter.
    Options default to the settings (`REWRITE_MAX_REVIEW_ROUNDS`); retries and format repairs
    follow each role's policy in `reqstudio.calls`.
    """

    def __init__(
        self,
        factory: ModelFactory,
        *,
        reviewer: SectionReviewer | None = None,
        options: RewriteOptions | None = None,
    ):
        settings = factory.settings
        self.factory = factory
        self.options = options or RewriteOptions(
            max_review_rounds=settings.rewrite_max_review_rounds
        )
        self.reviewer = reviewer or reviewer_for(factory)
        self.graph = build_graph(self.options.max_review_rounds)

    async def ainvoke(
        self,
        request: RewriteRequest,
        callback_handler: ProgressCallbackHandler | None = None,
        *,
        tracker: UsageTracker | None = None,
    ) -> RewriteResult:
        """Raises `RewriteStageError` (naming the stage, with the partial document) on failure."""
        tracker = tracker if tracker is not None else UsageTracker()
        started = time.perf_counter()
        context = RewriteContext(
            factory=self.factory,
            tracker=tracker,
            reviewer=self.reviewer,
            options=self.options,
            handler=callback_handler,
        )
        state = await self.graph.ainvoke(
            initial_state(request.original_content, request.clarifications),
            {"recursion_limit": recursion_limit(self.options.max_review_rounds)},
            context=context,
        )
        document = state["document_structure"]
        if document is None:  # cannot happen: the graph ends after filling
            raise RewriteStageError("content_filling", "no document was produced")
        return RewriteResult(
            structured_document=document,
            review_rounds=state["review_rounds"],
            usage=tracker.as_dict(),
            seconds=round(time.perf_counter() - started, 3),
        )

    def invoke(
        self,
        request: RewriteRequest,
        callback_handler: ProgressCallbackHandler | None = None,
        *,
        tracker: UsageTracker | None = None,
    ) -> RewriteResult:
        return run_sync(self.ainvoke(request, callback_handler, tracker=tracker))
