"""Team mode's society as a picture: one node per agent (the leader, root, drawn apart) and
the user, laid out as the tree of who created whom; an arrow for each direction in which
messages were actually sent, thicker the more were sent, and a dotted line for each pair that
may talk (one knows the other) but has not yet. `LivePicture` keeps the picture in one
Plotly element that is redrawn in place while the run goes on."""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import chainlit as cl
import plotly.graph_objects as go

from reqstudio.modes.team.protocol import ROOT_ID, USER_ID
from reqstudio.modes.team.society import AgentSociety
from reqstudio.web.rendering import THEME_NEUTRAL
from reqstudio.web.texts import Catalog

tr = Catalog("team")

LEADER_COLOUR = "#f59e0b"
AGENT_COLOUR = "#3b82f6"
USER_COLOUR = "#8b929c"
MESSAGE_COLOUR = "rgba(20, 184, 166, 0.85)"
BUBBLE_COLOUR = "#0f766e"  # dark enough for white digits, light enough for a dark page
CONTACT_COLOUR = "rgba(139, 146, 156, 0.6)"
NODE_SIZE = {"leader": 30, "agent": 22, "user": 22}
LABEL_CHARS = 16


@dataclass(frozen=True)
class Node:
    id: str
    role: str
    kind: str  # "leader" (root), "agent" or "user"
    x: float
    y: float
    parent: str | None = None
    contacts: tuple[str, ...] = ()  # "agent-1 (child)", in the order they were learnt


@dataclass
class SocietyGraph:
    """What the picture shows, in plain data: the nodes with their places, the messages
    sent per (sender, recipient) by type, and the pairs that know each other but have not
    exchanged a message (each pair once, in a fixed order)."""

    nodes: dict[str, Node]
    messages: dict[tuple[str, str], Counter[str]] = field(default_factory=dict)
    contacts: list[tuple[str, str]] = field(default_factory=list)

    def sent(self, agent_id: str) -> int:
        return sum(sum(c.values()) for (a, _), c in self.messages.items() if a == agent_id)

    def received(self, agent_id: str) -> int:
        return sum(sum(c.values()) for (_, b), c in self.messages.items() if b == agent_id)


def tree_places(society: AgentSociety) -> dict[str, tuple[float, float]]:
    """Where each node goes: the user on top, root under it, each agent a level below its
    creator; leaves one unit apart in creation order, a creator centred over its children.
    The same society always gives the same places."""
    children: dict[str, list[str]] = defaultdict(list)
    for agent in society.agents.values():
        if agent.parent is not None:
            children[agent.parent].append(agent.id)
    places: dict[str, tuple[float, float]] = {}
    next_leaf = 0.0

    def place(agent_id: str, depth: int) -> float:
        nonlocal next_leaf
        kids = [k for k in children[agent_id] if k not in places]
        if kids:
            xs = [place(kid, depth + 1) for kid in kids]
            x = (xs[0] + xs[-1]) / 2
        else:
            x = next_leaf
            next_leaf += 1
        places[agent_id] = (x, -float(depth))
        return x

    for agent in society.agents.values():  # root first; any other agent without a place
        if agent.id not in places:
            place(agent.id, agent.depth)
    root_x = places[ROOT_ID][0]
    places[USER_ID] = (root_x, 1.0)
    return places


def society_graph(society: AgentSociety) -> SocietyGraph:
    places = tree_places(society)

    def contacts_of(owner: str) -> tuple[str, ...]:
        return tuple(f"{c.agent_id} ({tr('how.' + c.how)})" for c in society.contacts(owner))

    nodes = {
        USER_ID: Node(
            USER_ID, tr("picture_user"), "user", *places[USER_ID], None, contacts_of(USER_ID)
        )
    }
    for agent in society.agents.values():
        kind = "leader" if agent.id == ROOT_ID else "agent"
        nodes[agent.id] = Node(
            agent.id,
            tr("root_role") if agent.id == ROOT_ID else agent.role.name,
            kind,
            *places[agent.id],
            agent.parent,
            contacts_of(agent.id),
        )
    messages: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for message in society.messages:
        if message.sender in nodes and message.to in nodes:
            messages[(message.sender, message.to)][message.message_type] += 1
    talked = {frozenset(pair) for pair in messages}
    contacts: list[tuple[str, str]] = []
    for owner in nodes:
        for entry in society.contacts(owner):
            pair = frozenset((owner, entry.agent_id))
            if entry.agent_id in nodes and pair not in talked:
                talked.add(pair)
                contacts.append((owner, entry.agent_id))
    return SocietyGraph(nodes, dict(messages), contacts)


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def label(node: Node) -> str:
    if node.kind == "user":
        return f"<b>{node.role}</b>"
    return f"<b>{node.id}</b><br>{short(node.role)}"


def label_side(graph: SocietyGraph, node: Node) -> str:
    """A node left of its creator has its label on the left, others on the right: away from
    the line to the creator and from the lines to its siblings."""
    parent = graph.nodes.get(node.parent or "")
    return "middle left" if parent is not None and node.x < parent.x else "middle right"


def arrow_width(count: int) -> float:
    return round(min(1.5 + 1.5 * math.log2(count), 7.0), 2)


def _node_trace(graph: SocietyGraph, kind: str) -> go.Scatter:
    nodes = [n for n in graph.nodes.values() if n.kind == kind]
    colour = {"leader": LEADER_COLOUR, "agent": AGENT_COLOUR, "user": USER_COLOUR}[kind]
    symbol = {"leader": "star", "agent": "circle", "user": "square"}[kind]
    hover = []
    for n in nodes:
        lines = [f"<b>{n.id}</b> · {n.role}"]
        if n.parent:
            lines.append(tr("picture_created_by", parent=n.parent))
        lines.append(tr("picture_counts", sent=graph.sent(n.id), received=graph.received(n.id)))
        if n.contacts:
            lines.append(tr("picture_knows", contacts=", ".join(n.contacts)))
        hover.append("<br>".join(lines))
    return go.Scatter(
        name=tr(f"picture_legend_{kind}"),
        x=[n.x for n in nodes],
        y=[n.y for n in nodes],
        mode="markers+text",
        marker={
            "size": NODE_SIZE[kind],
            "color": colour,
            "symbol": symbol,
            "line": {"width": 1, "color": "rgba(255, 255, 255, 0.6)"},
        },
        text=[label(n) for n in nodes],
        textposition=[label_side(graph, n) for n in nodes],
        hovertext=hover,
        hoverinfo="text",
        ids=[n.id for n in nodes],
    )


def is_tree_edge(graph: SocietyGraph, a: str, b: str) -> bool:
    """Creator and created (the user and root count as such): the layout's own lines."""
    na, nb = graph.nodes[a], graph.nodes[b]
    return na.parent == b or nb.parent == a or {a, b} == {USER_ID, ROOT_ID}


def curve(
    start: tuple[float, float], end: tuple[float, float], bend: float, points: int = 17
) -> list[tuple[float, float]]:
    """A quadratic curve from start to end, bowed to the left of the way it goes by `bend`
    times its length: a line that would run through other nodes, or back over the line of
    the other direction, goes round instead. `bend` 0: a straight line."""
    (x0, y0), (x1, y1) = start, end
    cx = (x0 + x1) / 2 - (y1 - y0) * bend
    cy = (y0 + y1) / 2 + (x1 - x0) * bend
    return [
        (
            (1 - t) ** 2 * x0 + 2 * (1 - t) * t * cx + t**2 * x1,
            (1 - t) ** 2 * y0 + 2 * (1 - t) * t * cy + t**2 * y1,
        )
        for t in (i / (points - 1) for i in range(points))
    ]


def bend_of(graph: SocietyGraph, sender: str, recipient: str) -> float:
    both_ways = (recipient, sender) in graph.messages
    if is_tree_edge(graph, sender, recipient):
        return 0.12 if both_ways else 0.0
    return 0.22


def _contact_trace(graph: SocietyGraph) -> go.Scatter:
    xs: list[float | None] = []
    ys: list[float | None] = []
    for a, b in graph.contacts:
        na, nb = graph.nodes[a], graph.nodes[b]
        bend = 0.0 if is_tree_edge(graph, a, b) else 0.22
        line = curve((na.x, na.y), (nb.x, nb.y), bend)
        xs += [x for x, _ in line] + [None]
        ys += [y for _, y in line] + [None]
    return go.Scatter(
        name=tr("picture_legend_contact"),
        x=xs,
        y=ys,
        mode="lines",
        line={"color": CONTACT_COLOUR, "width": 1.5, "dash": "dot"},
        hoverinfo="skip",
        legendgroup="contacts",
    )


def _message_lines(graph: SocietyGraph) -> tuple[list[go.Scatter], list[dict], go.Scatter]:
    """One line per direction in which messages went, thicker the more there were, with its
    arrowhead at the recipient; the count sits in a bubble on the line, whose hover lists
    the messages by type. A pair that wrote both ways gets two lines bowed apart."""
    lines: list[go.Scatter] = []
    heads: list[dict] = []
    bubbles: dict[str, list] = {"x": [], "y": [], "text": [], "hover": []}
    for (sender, recipient), kinds in graph.messages.items():
        a, b = graph.nodes[sender], graph.nodes[recipient]
        path = curve((a.x, a.y), (b.x, b.y), bend_of(graph, sender, recipient))
        count = sum(kinds.values())
        width = arrow_width(count)
        lines.append(
            go.Scatter(
                x=[x for x, _ in path],
                y=[y for _, y in path],
                mode="lines",
                line={"color": MESSAGE_COLOUR, "width": width},
                hoverinfo="skip",
                showlegend=False,
                legendgroup="messages",
            )
        )
        (hx, hy), (tx, ty) = path[-1], path[-5]  # the head, drawn along the line's last part
        heads.append(
            {
                "x": hx,
                "y": hy,
                "ax": tx,
                "ay": ty,
                "xref": "x",
                "yref": "y",
                "axref": "x",
                "ayref": "y",
                "text": "",
                "showarrow": True,
                "arrowhead": 2,
                "arrowsize": 1,
                "arrowwidth": width,
                "arrowcolor": MESSAGE_COLOUR,
                "standoff": NODE_SIZE[b.kind] / 2 + 2,
            }
        )
        mx, my = path[len(path) // 2]
        bubbles["x"].append(mx)
        bubbles["y"].append(my)
        bubbles["text"].append(str(count))
        kinds_text = ", ".join(f"{kind} ×{n}" for kind, n in sorted(kinds.items()))
        bubbles["hover"].append(f"{sender} → {recipient}: {kinds_text}")
    counts = go.Scatter(
        name=tr("picture_legend_messages"),
        x=bubbles["x"],
        y=bubbles["y"],
        mode="markers+text",
        marker={"size": 19, "color": BUBBLE_COLOUR, "symbol": "circle"},
        text=bubbles["text"],
        textposition="middle center",
        textfont={"color": "#ffffff", "size": 11},
        hovertext=bubbles["hover"],
        hoverinfo="text",
        legendgroup="messages",
    )
    return lines, heads, counts


def society_figure(society: AgentSociety) -> go.Figure:
    graph = society_graph(society)
    lines, heads, counts = _message_lines(graph)
    figure = go.Figure(
        [
            _contact_trace(graph),
            *lines,
            counts,
            *(_node_trace(graph, kind) for kind in ("user", "leader", "agent")),
        ]
    )
    xs = [n.x for n in graph.nodes.values()]
    ys = [n.y for n in graph.nodes.values()]
    levels = max(ys) - min(ys) + 1
    figure.update_layout(
        annotations=heads,
        showlegend=True,
        legend={"orientation": "h", "x": 0, "y": -0.02, "yanchor": "top"},
        height=int(150 + 110 * levels),
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
        hovermode="closest",
        **THEME_NEUTRAL,
    )
    hidden = {"visible": False, "fixedrange": True}
    # room on both sides for the labels
    figure.update_xaxes(range=[min(xs) - 1.0, max(xs) + 1.0], **hidden)
    figure.update_yaxes(range=[min(ys) - 0.4, max(ys) + 0.4], **hidden)
    return figure


class LivePicture:
    """The society's picture while the run goes on: one message with one Plotly element,
    redrawn in place when the society changed, at most once per `interval` seconds (the last
    change is always drawn, `interval` after the one before). Neither is written to the
    history: when the run ends `close` takes the live picture away, and the run's final
    picture is a message of its own, stored with its element like any other."""

    def __init__(self, society: AgentSociety, interval: float = 1.0):
        self.society = society
        self.interval = interval
        self.message: cl.Message | None = None
        self.element_id = str(uuid.uuid4())
        self.drawn: str | None = None  # the figure last sent, as JSON
        self.drawn_at = 0.0
        self.redraws = 0
        self._later: asyncio.Task | None = None

    async def changed(self) -> None:
        if len(self.society.agents) < 2 or (self._later is not None and not self._later.done()):
            return  # root alone is no society yet; a redraw is already due
        wait = self.drawn_at + self.interval - time.monotonic()
        if wait <= 0:
            await self.draw()
        else:
            self._later = asyncio.create_task(self._draw_after(wait))

    async def _draw_after(self, wait: float) -> None:
        await asyncio.sleep(wait)
        await self.draw()

    async def draw(self) -> None:
        figure = society_figure(self.society)
        drawn = figure.to_json()
        if drawn == self.drawn:
            self.drawn_at = time.monotonic()
            return
        if self.message is None:
            self.message = cl.Message(content=f"**{tr('picture_title')}**", author=tr("society"))
            self.message.parent_id = None
            self.message.metadata = {"icon": "users"}
            self.message.persisted = True  # shown, never stored: the final picture is
            await self.message.send()
        element = cl.Plotly(id=self.element_id, name="society-live", figure=figure)
        element.updatable = True  # the same element, new content
        await element.send(for_id=self.message.id, persist=False)
        self.drawn = drawn
        self.drawn_at = time.monotonic()  # the interval counts from the end of a redraw
        self.redraws += 1

    async def close(self) -> None:
        if self._later is not None and not self._later.done():
            self._later.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._later
        if self.message is not None:
            await self.message.remove()
            self.message = None
