"""Seed 001's iterative review as a LangGraph graph:

START -> start_round --Send x3--> review_perspective -> judge_reviews
      -> determine_next_action --approve--> finish -> END
                               --iterate--> revise_sections -> start_round
                               (--iterate--> await_user_edits -> revise_sections when
                                "pause after each round" is on: the user edits sections,
                                drops or adds findings before the authors revise)
"""

from __future__ import annotations

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from reqstudio.edges import on_the_loop
from reqstudio.modes.review.nodes import (
    await_user_edits,
    decide_next_action,
    fan_out,
    finish,
    judge_reviews,
    review_perspective,
    revise_sections,
    route_after_decision,
    start_round,
)
from reqstudio.modes.review.state import ReviewContext, ReviewState


def build_graph(checkpointer: BaseCheckpointSaver | None = None) -> CompiledStateGraph:
    builder = StateGraph(ReviewState, context_schema=ReviewContext)
    # A node is named after its function, except the decision, whose older name the
    # checkpoints of paused runs hold.
    nodes = (
        start_round,
        review_perspective,
        judge_reviews,
        revise_sections,
        await_user_edits,
        finish,
    )
    for node in nodes:
        builder.add_node(node)
    builder.add_node("determine_next_action", decide_next_action)
    builder.add_edge(START, "start_round")
    builder.add_conditional_edges("start_round", on_the_loop(fan_out), ["review_perspective"])
    builder.add_edge("review_perspective", "judge_reviews")
    builder.add_edge("judge_reviews", "determine_next_action")
    builder.add_conditional_edges(
        "determine_next_action",
        on_the_loop(route_after_decision),
        ["finish", "await_user_edits", "revise_sections"],
    )
    builder.add_edge("await_user_edits", "revise_sections")
    builder.add_edge("revise_sections", "start_round")
    builder.add_edge("finish", END)
    return builder.compile(checkpointer=checkpointer, name="review")


def recursion_limit(max_rounds: int) -> int:
    return 7 * max_rounds + 10
