"""The rewrite graph's nodes: ContextBuilder, OutlineGenerator, ContentFiller (one section per
step, so each written section is checkpointed), Reviser (review and patch). Each returns only
the state keys it changes and reports progress as events through the run's context."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from reqstudio.calls import RetryPolicy, complete_text, policy_for
from reqstudio.document_model import document_language
from reqstudio.llm import estimate_tokens
from reqstudio.modes.rewrite import embedded
from reqstudio.modes.rewrite.asking import ask_role
from reqstudio.modes.rewrite.errors import (
    RewriteStageError,
    failure_for,
    finish_reason_of,
    reason_for,
)
from reqstudio.modes.rewrite.guarded import (
    check_outline,
    check_patch,
    check_section,
    until_a_document,
)
from reqstudio.modes.rewrite.models import (
    DocumentSection,
    DocumentStructure,
    OutlinePlan,
    PatchFailure,
    ReviewIssue,
    ReviewRound,
    SectionPatch,
)
from reqstudio.modes.rewrite.placement import place_issues
from reqstudio.modes.rewrite.reviewers import ReviewInput, draft_with_ids, failed_reviewers
from reqstudio.modes.rewrite.state import RewriteContext, RewriteState
from reqstudio.modes.rewrite.texts import text
from reqstudio.prompts import render_prompt
from reqstudio.settings import ModelRole

log = logging.getLogger("reqstudio.rewrite")

OUTLINE, FILLING, REVIEW = "outline_generation", "content_filling", "review_revision"


def _policy(ctx: RewriteContext, role: ModelRole) -> RetryPolicy:
    return policy_for(role, ctx.factory.settings)


def _model(ctx: RewriteContext, role: ModelRole) -> Any:
    model = ctx.factory.for_role(role, callbacks=[ctx.tracker])
    if ctx.factory.endpoint.embedded:
        # llama-cpp-python reads `max_tokens` (ChatOpenAI would send max_completion_tokens).
        extra = {"grammar": embedded.SECTION_GRAMMAR, "max_tokens": embedded.SECTION_TOKENS}
        return model.bind(extra_body=extra)
    return model


def document_of(state: RewriteState) -> DocumentStructure:
    data = state["document_structure"]
    assert data is not None  # the outline exists before any node that reads it
    return DocumentStructure.model_validate(data)


def stage_error(
    stage: str,
    error: BaseException,
    *,
    tries: int | None = None,
    prompt: str = "",
    partial: DocumentStructure | None = None,
    section: DocumentSection | None = None,
) -> RewriteStageError:
    tokens = estimate_tokens(prompt) if prompt else None
    return RewriteStageError(
        stage,
        reason_for(error, tries, tokens),
        partial,
        section.id if section else None,
        section_title=section.title if section else None,
        finish_reason=finish_reason_of(error),
        failure=failure_for(error, tries, tokens),
    )


# --- ContextBuilder -------------------------------------------------------------------


def build_background(original_content: str, clarifications: Sequence[Any], language: str) -> str:
    return render_prompt(
        f"rewrite/{language}/background.md",
        original_content=original_content.strip(),
        clarifications=list(clarifications),
    ).strip()


async def build_context(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    language = document_language(state["original_content"])
    background = build_background(state["original_content"], state["clarifications"], language)
    return {"language": language, "background": background}


# --- OutlineGenerator -------------------------------------------------------------------


async def generate_outline(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    ctx = runtime.context
    await ctx.enter(OUTLINE)
    prompt = render_prompt(
        f"rewrite/{state['language']}/outline.md", background=state["background"]
    )
    policy = _policy(ctx, "RewriteOutline")

    async def plan() -> Any:
        answer = await ask_role(
            ctx.factory,
            "RewriteOutline",
            prompt,
            OutlinePlan,
            callbacks=[ctx.tracker],
            label="RewriteOutline",
        )
        check_outline(answer.value, state["language"])
        return answer

    try:
        answer = await until_a_document(
            "RewriteOutline", ctx.factory.settings, "RewriteOutline outline", plan
        )
    except Exception as error:
        raise stage_error(OUTLINE, error, tries=policy.attempts, prompt=prompt) from error
    structure = answer.value.to_structure(state["language"])
    log.info("rewrite: outline with %d sections", len(structure.sections))
    await ctx.leave(
        OUTLINE,
        document=structure,
        sections=len(structure.sections),
        repairs=answer.attempts - 1,
    )
    return {"document_structure": structure.model_dump(mode="json"), "filled": 0}


# --- ContentFiller ----------------------------------------------------------------------


def written_so_far(sections: Sequence[DocumentSection]) -> str:
    return "\n".join(s.render().rstrip("\n") + "\n" for s in sections).strip()


async def write_section_text(
    ctx: RewriteContext,
    role: ModelRole,
    messages: list[BaseMessage],
    *,
    on_token: Any = None,
    on_retry: Any = None,
    label: str,
) -> str:
    """A section's text, whole: only a `stop` finish is taken; cut streams, `content_filter`
    finishes and empty answers are retried by the role's policy (`reqstudio.calls`), a
    `length` finish is continued (at most `max_continuations` times)."""
    text_ = await complete_text(
        _model(ctx, role),
        messages,
        policy=_policy(ctx, role),
        on_token=on_token,
        on_retry=on_retry,
        max_continuations=ctx.options.max_continuations,
        label=label,
    )
    if not text_.strip():  # continuations that added nothing
        raise ValueError("the model's answer was empty")
    return text_.strip("\n") + "\n"


async def fill_section(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    """The next unwritten section. Its call sees the background, every section written so far
    and the section's goal (the seed's rolling context). One section per step, so a run that
    fails at section 14 of 20 resumes at section 14."""
    ctx = runtime.context
    document = document_of(state)
    total = len(document.sections)
    index = state["filled"]
    await ctx.enter(
        FILLING, sections=total, document=document, resumed_at=index + 1 if index else None
    )
    section = document.sections[index]
    done = document.sections[:index]
    await ctx.progress(
        FILLING,
        text("filling", ctx.progress_language(state), index=index + 1, total=total),
        index=index + 1,
        total=total,
        section_id=section.id,
        title=section.title,
    )
    prompt = render_prompt(
        f"rewrite/{state['language']}/fill.md",
        title=document.title,
        background=state["background"],
        previous_sections=written_so_far(done),
        index=index + 1,
        total=total,
        section_title=section.title,
        level=section.level,
        goal=section.goal,
    )

    async def on_token(chunk: str) -> None:
        await ctx.section_token(section.id, chunk)

    async def on_retry(attempt: int, error: BaseException, wait: float) -> None:
        await ctx.section_reset(section.id)

    label = f"RewriteFill {section.id}"

    async def write() -> str:
        content = await write_section_text(
            ctx, "RewriteFill", [HumanMessage(prompt)], on_token=on_token, on_retry=on_retry,
            label=label,
        )  # fmt: skip
        return check_section(content, state["language"], label, state["background"])

    try:
        content = await until_a_document(
            "RewriteFill", ctx.factory.settings, label, write, on_retry=on_retry
        )
    except Exception as error:
        tries = _policy(ctx, "RewriteFill").attempts
        raise stage_error(
            FILLING, error, tries=tries, prompt=prompt, partial=document, section=section
        ) from error
    updated = document.with_content(section.id, content)
    if index + 1 == total:
        await ctx.leave(FILLING, document=updated)
    return {"document_structure": updated.model_dump(mode="json"), "filled": index + 1}


# --- Reviser ------------------------------------------------------------------------------


async def review_document(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    ctx = runtime.context
    document = document_of(state)
    language = ctx.progress_language(state)
    round_number = state["review_round"] + 1
    await ctx.enter(REVIEW, reviewer=ctx.reviewer.name)
    await ctx.progress(REVIEW, text("reviewing", language, round=round_number), round=round_number)
    try:
        found = await ctx.reviewer.review(
            ReviewInput(state["background"], document, state["language"], round_number),
            [ctx.tracker],
        )
    except Exception as error:
        tries = _policy(ctx, "RewriteReview").attempts
        raise stage_error(REVIEW, error, tries=tries, partial=document) from error

    failed = failed_reviewers(found)
    for failure in failed:
        reason = failure.text(language)
        log.warning("rewrite: review round %d: %s could not review", round_number, failure.reviewer)
        await ctx.progress(
            REVIEW,
            text("reviewer_failed", language, round=round_number, reviewer=failure.reviewer,
                 reason=reason),
            round=round_number,
            failed_reviewer=failure,
        )  # fmt: skip

    async def reasked(count: int) -> None:
        await ctx.progress(
            REVIEW, text("reasking", language, round=round_number, count=count), round=round_number
        )

    issues, ignored = await place_issues(
        found, document, state["language"], ctx.factory, [ctx.tracker], on_reask=reasked
    )
    await ctx.progress(
        REVIEW,
        text("found", language, round=round_number, count=len(issues)),
        round=round_number,
        issues=issues,
        ignored=ignored,
        failed_reviewers=failed,
    )
    if ignored:
        log.warning("rewrite: %d review issue(s) name no section of the document", len(ignored))
        which = "; ".join(f"“{i.section_id}”: {i.description}" for i in ignored)
        await ctx.progress(
            REVIEW,
            text("unplaced", language, round=round_number, count=len(ignored), which=which),
            round=round_number,
            unplaced=ignored,
        )
    rounds = [
        *state["review_rounds"],
        ReviewRound(
            round=round_number, issues=issues, ignored=ignored, failed_reviewers=failed
        ).model_dump(mode="json"),
    ]
    return {
        "revision_issues": [i.model_dump(mode="json") for i in issues],
        "review_round": round_number,
        "review_rounds": rounds,
    }


def issues_by_section(issues: Sequence[ReviewIssue]) -> dict[str, list[ReviewIssue]]:
    grouped: dict[str, list[ReviewIssue]] = {}
    for issue in issues:
        grouped.setdefault(issue.section_id, []).append(issue)
    return grouped


async def patch_sections(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    """Targeted repair: each section with issues gets its content rewritten, concurrently;
    every other section stays exactly as it was. A patch that fails for good leaves its
    section as it was and is recorded; the patches that worked are kept."""
    ctx = runtime.context
    document = document_of(state)
    language = ctx.progress_language(state)
    issues = [ReviewIssue.model_validate(i) for i in state["revision_issues"]]
    grouped = issues_by_section(issues)
    draft = draft_with_ids(document)
    round_number = state["review_round"]
    await ctx.progress(
        REVIEW,
        text("patching", language, round=round_number, count=len(grouped)),
        round=round_number,
        sections=list(grouped),
    )
    tries = _policy(ctx, "RewritePatch").attempts

    async def patch_one(
        section: DocumentSection, issues: list[ReviewIssue]
    ) -> SectionPatch | PatchFailure:
        prompt = render_prompt(
            f"rewrite/{state['language']}/patch.md",
            title=document.title,
            background=state["background"],
            draft=draft,
            section_id=section.id,
            section_title=section.title,
            level=section.level,
            goal=section.goal,
            content=section.content.strip(),
            issues=issues,
        )
        label = f"RewritePatch {section.id}"

        async def write() -> str:
            content = await write_section_text(
                ctx, "RewritePatch", [HumanMessage(prompt)], label=label
            )
            return check_patch(section, content, issues, state["language"], state["background"])

        try:
            content = await until_a_document("RewritePatch", ctx.factory.settings, label, write)
        except Exception as error:  # CancelledError is no Exception: a stop still stops
            log.warning("rewrite: patch of %s failed", section.id, exc_info=True)
            why = failure_for(error, tries, estimate_tokens(prompt))
            failure = PatchFailure(
                section_id=section.id,
                title=section.title,
                reason=why.text("en"),
                failure=why.as_dict(),
                finish_reason=finish_reason_of(error),
                issues=issues,
            )
            await ctx.progress(
                REVIEW,
                text(
                    "patch_failed",
                    language,
                    title=section.title,
                    section_id=section.id,
                    reason=failure.text(language),
                ),
                round=round_number,
                failure=failure,
            )
            return failure
        patch = SectionPatch(
            section_id=section.id,
            title=section.title,
            before=section.content,
            after=content,
            issues=issues,
        )
        await ctx.progress(
            REVIEW,
            text("patched", language, title=section.title),
            round=round_number,
            patch=patch,
        )
        return patch

    outcomes = await asyncio.gather(
        *(patch_one(document.section(sid), found) for sid, found in grouped.items())
    )
    patches = [o for o in outcomes if isinstance(o, SectionPatch)]
    failures = [o for o in outcomes if isinstance(o, PatchFailure)]
    patched = document
    for patch in patches:
        patched = patched.with_content(patch.section_id, patch.after)
    rounds = list(state["review_rounds"])
    rounds[-1] = {
        **rounds[-1],
        "patches": [p.model_dump(mode="json") for p in patches],
        "failed_patches": [f.model_dump(mode="json") for f in failures],
    }
    return {
        "document_structure": patched.model_dump(mode="json"),
        "review_rounds": rounds,
        "revision_issues": [],
        "failed_patches": [
            *state["failed_patches"],
            *(f.model_dump(mode="json") for f in failures),
        ],
    }


async def finish_review(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    ctx = runtime.context
    rounds = [ReviewRound.model_validate(r) for r in state["review_rounds"]]
    await ctx.enter(REVIEW, reviewer=ctx.reviewer.name)  # review off: start and end at once
    await ctx.leave(
        REVIEW,
        document=document_of(state),
        rounds=len(rounds),
        issues_fixed=sum(len(p.issues) for r in rounds for p in r.patches),
        failed_patches=[PatchFailure.model_validate(f) for f in state["failed_patches"]],
    )
    return {}
