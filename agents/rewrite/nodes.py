"""The rewrite graph's nodes: ContextBuilder, OutlineGenerator, ContentFiller, Reviser (review
and patch). Each returns only the state keys it changes and reports progress to the handler."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from agents.rewrite import embedded
from agents.rewrite.callbacks import notify
from agents.rewrite.errors import RewriteStageError
from agents.rewrite.models import (
    DocumentSection,
    OutlinePlan,
    ReviewIssue,
    ReviewRound,
    SectionPatch,
)
from agents.rewrite.reviewers import ReviewInput, draft_with_ids
from agents.rewrite.state import RewriteContext, RewriteState
from reqstudio.calls import IncompleteAnswerError, RetryPolicy, complete_text, policy_for
from reqstudio.errors import describe_failure
from reqstudio.prompts import render_prompt
from reqstudio.settings import ModelRole
from reqstudio.structured import StructuredOutputError, ask_structured

log = logging.getLogger("reqstudio.rewrite")

OUTLINE, FILLING, REVIEW = "outline_generation", "content_filling", "review_revision"


def document_language(text: str) -> str:
    """ "zh" when Chinese characters carry the text, else "en"."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    letters = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "zh" if cjk * 3 >= letters and cjk > 0 else "en"


def reason_for(error: BaseException) -> str:
    if isinstance(error, StructuredOutputError):
        return str(error)
    if type(error) is ValueError:  # our own checks, e.g. an empty section
        return str(error)
    if isinstance(error, IncompleteAnswerError):
        if error.reason == "length":
            return "the answer was cut off at the length limit, also after continuing"
        return "the answer stream ended without a finish reason, also after retries"
    return describe_failure(error, "en")


def _policy(ctx: RewriteContext, role: ModelRole) -> RetryPolicy:
    return policy_for(role, ctx.factory.settings)


def _model(ctx: RewriteContext, role: ModelRole) -> Any:
    model = ctx.factory.for_role(role, callbacks=[ctx.tracker])
    if ctx.factory.endpoint.embedded:
        # llama-cpp-python reads `max_tokens` (ChatOpenAI would send max_completion_tokens).
        extra = {"grammar": embedded.SECTION_GRAMMAR, "max_tokens": embedded.SECTION_TOKENS}
        return model.bind(extra_body=extra)
    return model


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
    await notify(ctx.handler, "on_stage_start", OUTLINE)
    prompt = render_prompt(
        f"rewrite/{state['language']}/outline.md", background=state["background"]
    )
    try:
        answer = await ask_structured(
            ctx.factory.for_role("RewriteOutline", callbacks=[ctx.tracker]),
            [HumanMessage(prompt)],
            OutlinePlan,
            response_format=embedded.response_format(ctx.factory, OutlinePlan),
            policy=_policy(ctx, "RewriteOutline"),
            label="RewriteOutline",
        )
    except Exception as error:
        raise RewriteStageError(OUTLINE, reason_for(error)) from error
    structure = answer.value.to_structure(state["language"])
    log.info("rewrite: outline with %d sections", len(structure.sections))
    await notify(
        ctx.handler,
        "on_stage_end",
        OUTLINE,
        document=structure,
        sections=len(structure.sections),
        repairs=answer.attempts - 1,
    )
    return {"document_structure": structure}


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
    """A section's text, whole: cut streams retried by the role's policy, a `length` finish
    continued (at most `max_continuations` times), an empty answer refused."""
    text = await complete_text(
        _model(ctx, role),
        messages,
        policy=_policy(ctx, role),
        on_token=on_token,
        on_retry=on_retry,
        max_continuations=ctx.options.max_continuations,
        label=label,
    )
    if not text.strip():
        raise ValueError("the model's answer was empty")
    return text.strip("\n") + "\n"


async def fill_content(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    """Sections in order; each call sees the background, every section written so far and the
    current section's goal (the seed's rolling context)."""
    ctx = runtime.context
    document = state["document_structure"]
    assert document is not None
    await notify(ctx.handler, "on_stage_start", FILLING, sections=len(document.sections))
    total = len(document.sections)
    done: list[DocumentSection] = []
    for index, section in enumerate(document.sections, start=1):
        await notify(
            ctx.handler,
            "on_stage_progress",
            FILLING,
            f"正在生成第 {index}/{total} 节...",
            index=index,
            total=total,
            section_id=section.id,
            title=section.title,
        )
        prompt = render_prompt(
            f"rewrite/{state['language']}/fill.md",
            title=document.title,
            background=state["background"],
            previous_sections=written_so_far(done),
            index=index,
            total=total,
            section_title=section.title,
            level=section.level,
            goal=section.goal,
        )

        async def on_token(text: str, section_id: str = section.id) -> None:
            await notify(ctx.handler, "on_section_token", section_id, text)

        async def on_retry(
            attempt: int, error: BaseException, wait: float, section_id: str = section.id
        ) -> None:
            await notify(ctx.handler, "on_section_reset", section_id)

        try:
            content = await write_section_text(
                ctx,
                "RewriteFill",
                [HumanMessage(prompt)],
                on_token=on_token,
                on_retry=on_retry,
                label=f"RewriteFill {section.id}",
            )
        except Exception as error:
            partial = document.model_copy(
                update={"sections": [*done, *document.sections[len(done) :]]}
            )
            raise RewriteStageError(FILLING, reason_for(error), partial, section.id) from error
        done.append(section.model_copy(update={"content": content}))
    filled = document.model_copy(update={"sections": done})
    await notify(ctx.handler, "on_stage_end", FILLING, document=filled)
    return {"document_structure": filled}


# --- Reviser ------------------------------------------------------------------------------


async def review_document(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    ctx = runtime.context
    document = state["document_structure"]
    assert document is not None
    round_number = state["review_round"] + 1
    if round_number == 1:
        await notify(ctx.handler, "on_stage_start", REVIEW, reviewer=ctx.reviewer.name)
    await notify(
        ctx.handler,
        "on_stage_progress",
        REVIEW,
        f"第 {round_number} 轮评审中...",
        round=round_number,
    )
    try:
        found = await ctx.reviewer.review(
            ReviewInput(state["background"], document, state["language"], round_number),
            [ctx.tracker],
        )
    except Exception as error:
        raise RewriteStageError(REVIEW, reason_for(error), document) from error
    known = set(document.section_ids)
    issues = [i for i in found if i.section_id in known]
    ignored = [i for i in found if i.section_id not in known]
    if ignored:
        log.warning("rewrite: %d review issue(s) name no section of the document", len(ignored))
    await notify(
        ctx.handler,
        "on_stage_progress",
        REVIEW,
        f"第 {round_number} 轮评审：发现 {len(issues)} 个问题",
        round=round_number,
        issues=issues,
        ignored=ignored,
    )
    rounds = [
        *state["review_rounds"],
        ReviewRound(round=round_number, issues=issues, ignored=ignored),
    ]
    return {"revision_issues": issues, "review_round": round_number, "review_rounds": rounds}


def issues_by_section(issues: Sequence[ReviewIssue]) -> dict[str, list[ReviewIssue]]:
    grouped: dict[str, list[ReviewIssue]] = {}
    for issue in issues:
        grouped.setdefault(issue.section_id, []).append(issue)
    return grouped


async def patch_sections(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    """Targeted repair: each section with issues gets its content rewritten, concurrently;
    every other section stays exactly as it was."""
    ctx = runtime.context
    document = state["document_structure"]
    assert document is not None
    grouped = issues_by_section(state["revision_issues"])
    draft = draft_with_ids(document)
    round_number = state["review_round"]
    await notify(
        ctx.handler,
        "on_stage_progress",
        REVIEW,
        f"第 {round_number} 轮修订：{len(grouped)} 节",
        round=round_number,
        sections=list(grouped),
    )

    async def patch_one(section: DocumentSection, issues: list[ReviewIssue]) -> SectionPatch:
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
        try:
            content = await write_section_text(
                ctx,
                "RewritePatch",
                [HumanMessage(prompt)],
                label=f"RewritePatch {section.id}",
            )
        except Exception as error:
            raise RewriteStageError(REVIEW, reason_for(error), document, section.id) from error
        patch = SectionPatch(
            section_id=section.id,
            title=section.title,
            before=section.content,
            after=content,
            issues=issues,
        )
        await notify(
            ctx.handler,
            "on_stage_progress",
            REVIEW,
            f"已修订「{section.title}」",
            round=round_number,
            patch=patch,
        )
        return patch

    patches = await asyncio.gather(
        *(patch_one(document.section(sid), issues) for sid, issues in grouped.items())
    )
    patched = document
    for patch in patches:
        patched = patched.with_content(patch.section_id, patch.after)
    rounds = list(state["review_rounds"])
    rounds[-1] = rounds[-1].model_copy(update={"patches": list(patches)})
    return {"document_structure": patched, "review_rounds": rounds, "revision_issues": []}


async def finish_review(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict[str, Any]:
    ctx = runtime.context
    rounds = state["review_rounds"]
    if not rounds:  # review switched off (REWRITE_MAX_REVIEW_ROUNDS=0)
        await notify(ctx.handler, "on_stage_start", REVIEW, reviewer=ctx.reviewer.name)
    await notify(
        ctx.handler,
        "on_stage_end",
        REVIEW,
        document=state["document_structure"],
        rounds=len(rounds),
        issues_fixed=sum(len(p.issues) for r in rounds for p in r.patches),
    )
    return {}
