"""Review mode's improvement trajectory as a chart: the issues found per round, stacked by
priority."""

from __future__ import annotations

import plotly.graph_objects as go

from reqstudio.modes.review.models import ReviewRound
from reqstudio.modes.review.trajectory import counts_per_round
from reqstudio.web.rendering import GRID, THEME_NEUTRAL
from reqstudio.web.review.tables import priority_name
from reqstudio.web.texts import Catalog

tr = Catalog("review")


COLOURS = {"high": "#d62728", "medium": "#ff7f0e", "low": "#2ca02c"}


def trajectory_figure(rounds: list[ReviewRound]) -> go.Figure:
    data = counts_per_round(rounds)
    figure = go.Figure(
        [
            go.Bar(
                name=priority_name(p),
                x=[f"{r}" for r in data["round"]],
                y=data[p],
                marker_color=COLOURS[p],
            )
            for p in ("high", "medium", "low")
        ]
    )
    figure.update_layout(
        barmode="stack",
        title=tr("chart_title"),
        xaxis_title=tr("chart_round"),
        yaxis_title=tr("chart_count"),
        yaxis={"dtick": 1, "rangemode": "tozero"},
        height=340,
        # under the axis, not in the top right corner where Plotly's tool bar covers it
        legend={"orientation": "h", "x": 0, "y": -0.22, "yanchor": "top"},
        margin={"l": 40, "r": 20, "t": 50, "b": 70},
        **THEME_NEUTRAL,
    )
    figure.update_xaxes(gridcolor=GRID, zerolinecolor=GRID)
    figure.update_yaxes(gridcolor=GRID, zerolinecolor=GRID)
    return figure
