"""The tools that call a model: generate an SRS, review a document, rewrite one. Offered only
when a provider is configured (OPENAI_API_KEY or OPENAI_BASE_URL, `reqstudio.settings`): the
bundled offline demo model is too small for a client that expects real answers.

Each tool runs its mode's engine through the one entry shape (`reqstudio.modes.<mode>.entry.run`)
and turns the run's events (`reqstudio.events`) into MCP progress notifications: a step that
starts or ends, a notice, is one notification, its message the step's name, round and outcome.
A run's `failed` event ends the call as an MCP tool error saying why (the engine has used its
retry policy by then); a finished run answers its document and its `outcome` in the five words
every mode shares (`reqstudio.outcomes`), so a run that finished without a pass never reads as
passed. Runs are not checkpointed: an MCP call has no thread to resume.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from pydantic import BaseModel, Field

from reqstudio.events import BaseEvent, Failed, Finished, Notice, StepFinished, StepStarted
from reqstudio.mcp_server.documents import ToolLimits
from reqstudio.mcp_server.inputs import DocumentInput, InputError, read_text

if TYPE_CHECKING:
    from reqstudio.runtime import AppRuntime

Language = Literal["en", "zh"]


class Clarification(BaseModel):
    question: str = Field(min_length=1)
    answer: str


def progress_line(event: BaseEvent) -> str | None:
    """What a progress notification says of `event`; None for events it does not report:
    streamed tokens (too many to send one by one) and resets (the text streamed so far goes,
    which a client that sees no stream has nothing to do with)."""
    round_text = f" (round {event.round})" if getattr(event, "round", None) else ""
    if isinstance(event, StepStarted):
        return f"{event.step or event.name}{round_text} started"
    if isinstance(event, StepFinished) and event.outcome != "reset":
        return f"{event.step or event.name}{round_text} {event.outcome}"
    if isinstance(event, Notice):
        said = getattr(event, "message", "") or getattr(event, "text", "")
        return f"note: {said or event.code or event.name}"
    return None


def failure_text(event: Failed, language: str) -> str:
    """Why a run failed, in `language`: its failure code rendered from the catalogue where it
    has one the catalogue knows, else the engine's words or the error."""
    from reqstudio.failures import Failure, FailureCode, render

    if event.code:
        try:
            return render(Failure(FailureCode(event.code), event.values), language)
        except ValueError:  # a code of a mode's own, not a failure code
            pass
    error = getattr(event, "error", None)
    said = getattr(event, "message", "") or (str(error) if error is not None else "")
    return said or event.code or "the run failed"


async def follow(stream: AsyncIterator[BaseEvent], ctx: Context, what: str, language: str) -> Any:
    """Run `stream` to its end, reporting progress; the finished run's result, or a tool error."""
    sent = 0
    async with aclosing(stream):
        async for event in stream:
            if isinstance(event, Failed):
                where = getattr(event, "agent", None) or getattr(event, "step", None)
                at = f" at {where}" if where else ""
                raise ToolError(f"{what} failed{at}: {failure_text(event, language)}")
            if isinstance(event, Finished):
                return event.result
            line = progress_line(event)
            if line is not None:
                sent += 1
                await ctx.report_progress(sent, None, line)
    raise ToolError(f"{what} ended without a result")


def register_model_tools(server: FastMCP, limits: ToolLimits, runtime: AppRuntime) -> None:
    settings = runtime.settings

    def text_of(document: DocumentInput) -> str:
        try:
            text = read_text(document, allow_paths=limits.allow_paths, max_mb=limits.max_mb)
        except InputError as exc:
            raise ToolError(str(exc)) from None
        if not text.strip():
            raise ToolError(f"{document.shown_name} holds no text")
        return text

    @server.tool(
        name="generate_srs",
        description="Generate a Software Requirements Specification from a request (the "
        "multi-agent SRS pipeline: parse, explore, clarify against a reference SRS, write). "
        "Sends a progress notification at each agent's start and end. Answers the document "
        "(with its traceability matrix) and the requirements.",
    )
    async def generate_srs(
        request: Annotated[DocumentInput, Field(description="what the users want")],
        ctx: Context,
        reference_srs: DocumentInput | None = None,
        max_iterations: Annotated[int, Field(ge=1, le=20)] = 1,
        language: Language = "en",
    ) -> dict[str, Any]:
        from reqstudio.modes.srs.engine import SrsRequest
        from reqstudio.modes.srs.entry import run
        from reqstudio.usage import UsageTracker

        srs_request = SrsRequest(
            user_input=text_of(request),
            reference_srs=text_of(reference_srs) if reference_srs is not None else "",
            max_iterations=max_iterations,
        )
        stream = run(srs_request, runtime.factory(), tracker=UsageTracker())
        result = await follow(stream, ctx, "the SRS generation", language)
        return {
            "outcome": "passed",
            "document": result.final_markdown(),
            "requirements": [r.model_dump(mode="json") for r in result.requirements],
            "rounds": result.rounds,
            "usage": result.usage,
        }

    @server.tool(
        name="review_document",
        description="Review a requirements document round after round (red team, blue team, "
        "client, judge) and fix what they find. Sends a progress notification at each "
        "reviewer's and author's start and end. `outcome` is `passed` only when no "
        "high-priority finding is open and every reviewer took part.",
    )
    async def review_document(
        document: DocumentInput,
        ctx: Context,
        max_rounds: Annotated[int | None, Field(ge=1, le=10)] = None,
        language: Language = "en",
    ) -> dict[str, Any]:
        from reqstudio.modes.review.documents import document_too_large
        from reqstudio.modes.review.engine import ReviewRequest
        from reqstudio.modes.review.entry import run
        from reqstudio.usage import UsageTracker

        text = text_of(document)
        factory = runtime.factory()
        if (too_large := document_too_large(text, factory, document.shown_name)) is not None:
            raise ToolError(too_large.message(language))
        review_request = ReviewRequest(
            document=text,
            title=document.shown_name.rsplit(".", 1)[0],
            max_rounds=max_rounds or settings.review_max_rounds,
        )
        stream = run(review_request, factory, tracker=UsageTracker())
        result = await follow(stream, ctx, "the review", language)
        return {
            "outcome": str(result.outcome),
            "stop_reason": result.stop_reason,
            "document": result.improved_markdown,
            "rounds": len(result.rounds),
            "open_findings": result.open_findings_text(language),
            "usage": result.usage,
        }

    @server.tool(
        name="rewrite_document",
        description="Rewrite a document with the answers to clarifying questions: an outline, "
        "each section in order, then reviewed and patched. Sends a progress notification at "
        "each stage's start and end. `outcome` is `incomplete` when some patches failed (those "
        "sections stay as drafted), `without_pass` when the review could not pass it.",
    )
    async def rewrite_document(
        document: DocumentInput,
        clarifications: list[Clarification],
        ctx: Context,
        language: Language = "en",
    ) -> dict[str, Any]:
        from reqstudio.modes.rewrite.entry import run
        from reqstudio.modes.rewrite.models import ClarificationItem, RewriteRequest
        from reqstudio.modes.rewrite.outcome import rewrite_outcome
        from reqstudio.modes.rewrite.sizes import context_sizes
        from reqstudio.modes.rewrite.state import RewriteOptions

        rewrite_request = RewriteRequest(
            original_content=text_of(document),
            clarifications=[
                ClarificationItem(question=c.question, answer=c.answer) for c in clarifications
            ],
        )
        factory = runtime.factory()
        sizes = context_sizes(rewrite_request, factory)
        if not sizes.fits:
            too_large = sizes.describe(language)
            raise ToolError(f"{document.shown_name}: too large for the model: {too_large}")
        options = RewriteOptions(
            max_review_rounds=settings.rewrite_max_review_rounds, language=language
        )
        stream = run(rewrite_request, factory, options=options)
        result = await follow(stream, ctx, "the rewrite", language)
        return {
            "outcome": str(rewrite_outcome(result)),
            "stop_reason": result.stop_reason,
            "document": result.rewritten_content,
            "failed_patches": [f.model_dump(mode="json") for f in result.failed_patches],
            "usage": result.usage,
        }
