"""The SRS pipeline as a LangGraph state graph (seed 000):

    none:               ReqParse -> ReqExplore <-> ReqClarify -> DocGenerate -> END
                        (ReqClarify -> UserReview -> ... with "pause after each round")
    no-clarify:         ReqParse -> ReqExplore (once) -> DocGenerate -> END
    no-explore-clarify: ReqParse -> DocGenerate -> END

The ReqExplore/ReqClarify loop goes on while `iteration < max_iterations`, counted as the
seed counts (ReqParse makes `iteration` 1, each ReqClarify adds 1: N gives N-1 rounds, at
least one), and ends as soon as no unfrozen, non-removed item is left.
"""

from __future__ import annotations

from typing import Literal

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from reqstudio.edges import on_the_loop
from reqstudio.modes.srs.decisions import await_user_decision
from reqstudio.modes.srs.nodes import (
    doc_generate,
    req_clarify,
    req_explore,
    req_parse,
    unfrozen_items,
)
from reqstudio.modes.srs.state import Ablation, GraphState, SrsContext


def route_after_clarify(state: GraphState) -> Literal["ReqExplore", "DocGenerate"]:
    """Another round while iteration < max_iterations (the seed's test) and something is
    still open; otherwise write the document."""
    if state["iteration"] >= state["max_iterations"]:
        return "DocGenerate"
    if not unfrozen_items(state):
        return "DocGenerate"
    return "ReqExplore"


def route_after_round(state: GraphState) -> Literal["UserReview", "ReqExplore", "DocGenerate"]:
    """With "pause after each round" on, every ReqClarify round waits for the user first."""
    if state.get("pause_after_round"):
        return "UserReview"
    return route_after_clarify(state)


def build_graph(
    ablation: Ablation = "none", checkpointer: BaseCheckpointSaver | None = None
) -> CompiledStateGraph:
    builder = StateGraph(GraphState, context_schema=SrsContext)
    builder.add_node("ReqParse", req_parse)
    builder.add_node("DocGenerate", doc_generate)
    builder.add_edge(START, "ReqParse")
    builder.add_edge("DocGenerate", END)
    if ablation == "no-explore-clarify":
        builder.add_edge("ReqParse", "DocGenerate")
    else:
        builder.add_node("ReqExplore", req_explore)
        builder.add_edge("ReqParse", "ReqExplore")
    if ablation == "no-clarify":
        builder.add_edge("ReqExplore", "DocGenerate")
    elif ablation == "none":
        builder.add_node("ReqClarify", req_clarify)
        builder.add_edge("ReqExplore", "ReqClarify")
        builder.add_node("UserReview", await_user_decision)
        builder.add_conditional_edges("ReqClarify", on_the_loop(route_after_round))
        builder.add_conditional_edges("UserReview", on_the_loop(route_after_clarify))
    return builder.compile(checkpointer=checkpointer, name=f"srs-{ablation}")


def recursion_limit(max_iterations: int) -> int:
    """Supersteps a run can take: ReqParse, three per round (the pause included), DocGenerate,
    and some slack."""
    return 3 * max_iterations + 10
