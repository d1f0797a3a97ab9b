"""Seed 003's three stages as a LangGraph graph:

    build_context -> generate_outline -> fill_section (once per section, in order)
    fill_section --sections left--> fill_section
    fill_section --all written--> review_document (or finish_review with review off)
    review_document --issues--> patch_sections --rounds left--> review_document
    review_document --no issues--> finish_review -> END
    patch_sections --limit reached, or a patch failed--> finish_review

A round is one review and, when it found issues, the patch of those sections. At most
`max_review_rounds` rounds run; with 0 the review is skipped. A failed patch ends the loop:
the result is then incomplete, and another review would only report the same section again.
With a checkpointer every finished node (each written section among them) is saved, so a
failed or stopped run resumes where it stopped.
"""

from __future__ import annotations

from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from reqstudio.edges import on_the_loop
from reqstudio.modes.rewrite.nodes import (
    build_context,
    fill_section,
    finish_review,
    generate_outline,
    patch_sections,
    review_document,
)
from reqstudio.modes.rewrite.state import RewriteContext, RewriteState

MAX_SECTIONS = 30  # OutlinePlan's bound


def route_after_fill(max_review_rounds: int):
    def route(state: RewriteState) -> Literal["fill_section", "review_document", "finish_review"]:
        document = state["document_structure"] or {}
        if state["filled"] < len(document.get("sections", [])):
            return "fill_section"
        return "review_document" if max_review_rounds > 0 else "finish_review"

    return route


def route_after_review(state: RewriteState) -> Literal["patch_sections", "finish_review"]:
    """The seed's conditional edge: issues go to the patch node, none ends the loop."""
    return "patch_sections" if state["revision_issues"] else "finish_review"


def route_after_patch(max_review_rounds: int):
    def route(state: RewriteState) -> Literal["review_document", "finish_review"]:
        if state["failed_patches"]:
            return "finish_review"
        return "review_document" if state["review_round"] < max_review_rounds else "finish_review"

    return route


def build_graph(
    max_review_rounds: int, checkpointer: BaseCheckpointSaver | None = None
) -> CompiledStateGraph:
    builder = StateGraph(RewriteState, context_schema=RewriteContext)
    nodes = (
        build_context,
        generate_outline,
        fill_section,
        review_document,
        patch_sections,
        finish_review,
    )
    for node in nodes:  # named after its function
        builder.add_node(node)
    builder.add_edge(START, "build_context")
    builder.add_edge("build_context", "generate_outline")
    builder.add_edge("generate_outline", "fill_section")
    builder.add_conditional_edges("fill_section", on_the_loop(route_after_fill(max_review_rounds)))
    builder.add_conditional_edges("review_document", on_the_loop(route_after_review))
    builder.add_conditional_edges(
        "patch_sections", on_the_loop(route_after_patch(max_review_rounds))
    )
    builder.add_edge("finish_review", END)
    return builder.compile(checkpointer=checkpointer, name="rewrite")


def recursion_limit(max_review_rounds: int) -> int:
    return 2 * max_review_rounds + MAX_SECTIONS + 10
