"""Team mode's society as a picture: the graph taken from a society
(nodes, places, messages per direction, unused contacts), the Plotly figure drawn from it,
the live picture redrawn in place and never stored, and a whole run through the view ending
with one stored picture beside the record. Chainlit's emitter and data layer are stand-ins
that record what the browser would be sent and what the history would keep."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import chainlit.element as cl_element
import chainlit.message as cl_message
import plotly.io as pio
from chainlit.context import ChainlitContext, context_var
from chainlit.emitter import BaseChainlitEmitter
from chainlit.session import HTTPSession

from reqstudio.modes.team import TeamConfig, TeamRun
from reqstudio.modes.team.protocol import ROOT_ID, USER_ID
from reqstudio.modes.team.society import AgentSociety
from reqstudio.web import team_picture
from reqstudio.web.live import LiveRun
from reqstudio.web.team import TeamViews
from reqstudio.web.team_picture import LivePicture, arrow_width, society_figure, society_graph
from tests.test_team_run import answer, role, spawn, turn
from tests.test_team_run import send as say
from tests.test_team_society import spawn as spawn_in


def small_society() -> AgentSociety:
    """root created an analyst and a writer, the analyst a glossary expert; the writer was
    introduced to the analyst and they talked both ways; the glossary expert got root as a
    collaborator it never wrote to."""
    society = AgentSociety()
    society.submit_task("写 SRS 初稿")
    analyst = spawn_in(society, ROOT_ID, "分析师")
    writer = spawn_in(society, ROOT_ID, "写作者")
    spawn_in(
        society,
        analyst,
        "术语专家",
        collaborators=[{"agent_id": ROOT_ID, "role_description": "领导"}],
    )
    need = {"reason": "需要功能需求", "required_capability": "功能需求分析"}
    assert society.send_message(writer, ROOT_ID, "introduction_request", "", need).ok
    intro = {"target_id": analyst, "usage_advice": "向他要 FR 列表"}
    assert society.send_message(ROOT_ID, writer, "introduction_response", "", intro).ok
    assert society.send_message(
        writer, analyst, "collaboration_request", "请给 FR", reason="初稿"
    ).ok
    assert society.send_message(analyst, writer, "collaboration_response", "FR-1 发布商品").ok
    done = {"status": "done"}
    assert society.send_message(ROOT_ID, USER_ID, "status_report", "SRS 初稿", done).ok
    return society


def test_the_graph_has_each_agent_the_user_and_the_leader_laid_out_as_the_creation_tree():
    graph = society_graph(small_society())
    kinds = {n.id: n.kind for n in graph.nodes.values()}
    assert kinds == {
        "user": "user",
        "root": "leader",
        "agent-1": "agent",
        "agent-2": "agent",
        "agent-3": "agent",
    }
    assert graph.nodes["agent-3"].parent == "agent-1" and graph.nodes["agent-3"].role == "术语专家"
    places = {n.id: (n.x, n.y) for n in graph.nodes.values()}
    # one level per generation, the user above root, children in creation order, each
    # creator over the middle of its children
    assert places == {
        "user": (0.5, 1.0),
        "root": (0.5, 0.0),
        "agent-1": (0.0, -1.0),
        "agent-2": (1.0, -1.0),
        "agent-3": (0.0, -2.0),
    }
    # messages actually sent, per direction and type (briefs count: they are messages)
    assert graph.messages[("agent-2", "agent-1")] == {"collaboration_request": 1}
    assert graph.messages[("agent-1", "agent-2")] == {"collaboration_response": 1}
    assert graph.messages[("root", "agent-2")] == {"task_assignment": 1, "introduction_response": 1}
    assert graph.messages[("user", "root")] == {"collaboration_request": 1}  # the task
    assert graph.messages[("root", "user")] == {"status_report": 1}
    assert graph.sent("root") == 4 and graph.received("agent-2") == 3
    # the collaborator root was given to agent-3 is a contact no message used, listed once
    assert graph.contacts == [("agent-3", "root")]
    assert "root (given as a collaborator)" in graph.nodes["agent-3"].contacts  # in words
    assert "agent-1 (introduced)" in graph.nodes["agent-2"].contacts


def test_the_figure_draws_labelled_nodes_one_arrow_per_direction_and_reads_on_any_theme():
    society = small_society()
    figure = society_figure(society)
    assert figure.to_json() == society_figure(society).to_json()  # the same picture each time
    traces = {t.name: t for t in figure.data if t.name}
    leader, agents, user = traces["leader (root)"], traces["agent"], traces["user"]
    assert list(leader.ids) == ["root"] and leader.marker.symbol == "star"
    assert list(agents.ids) == ["agent-1", "agent-2", "agent-3"]
    assert agents.marker.symbol == "circle" and user.marker.symbol == "square"
    assert leader.marker.size > agents.marker.size
    assert agents.text[2] == "<b>agent-3</b><br>术语专家"
    # agent-1 is left of root: its label is on its left, away from the line up to root
    assert list(agents.textposition) == ["middle left", "middle right", "middle right"]
    assert "created by agent-1" in agents.hovertext[2]
    # messages: a line and an arrowhead per direction, the count on it, thicker for more
    graph = society_graph(society)
    lines = [t for t in figure.data if t.legendgroup == "messages" and t.mode == "lines"]
    assert len(lines) == len(graph.messages) == len(figure.layout.annotations)
    counts = traces["messages sent (thicker: more)"]
    assert sorted(counts.text) == sorted(str(sum(c.values())) for c in graph.messages.values())
    assert "agent-2 → agent-1: collaboration_request ×1" in counts.hovertext
    assert arrow_width(2) > arrow_width(1)
    widths = {round(t.line.width, 2) for t in lines}
    assert widths == {arrow_width(1), arrow_width(2)}
    # the two directions between the writer and the analyst are bowed apart
    both_ways = [t for t in lines if {t.x[0], t.x[-1]} == {0.0, 1.0} and t.y[0] == -1.0]
    assert len(both_ways) == 2 and both_ways[0].y[8] != both_ways[1].y[8]
    contacts = traces["may talk (no message yet)"]
    assert contacts.line.dash == "dot" and None in contacts.x
    # no page of its own (Plotly's white), grey text: the chart reads in dark and light mode
    assert figure.layout.paper_bgcolor == "rgba(0, 0, 0, 0)"
    assert figure.layout.plot_bgcolor == "rgba(0, 0, 0, 0)"
    assert figure.layout.font.color == "#8b929c"
    assert figure.layout.xaxis.visible is False and figure.layout.yaxis.visible is False


class Screen(BaseChainlitEmitter):
    """What the browser is sent: messages by id (removed ones dropped) and each element sent,
    with the content its file holds."""

    def __init__(self, session: HTTPSession):
        super().__init__(session)
        self.messages: dict[str, str] = {}
        self.removed: list[str] = []
        self.elements: list[dict[str, Any]] = []
        self.files: dict[str, Any] = {}

    async def send_step(self, step_dict):
        self.messages[step_dict["id"]] = step_dict.get("output") or ""

    async def update_step(self, step_dict):
        self.messages[step_dict["id"]] = step_dict.get("output") or ""

    async def stream_start(self, step_dict):
        self.messages[step_dict["id"]] = step_dict.get("output") or ""

    async def delete_step(self, step_dict):
        self.messages.pop(step_dict["id"], None)
        self.removed.append(step_dict["id"])

    async def send_element(self, element_dict):
        self.elements.append({**element_dict, "content": self.files[element_dict["chainlitKey"]]})

    def shown(self, kind: str) -> list[dict[str, Any]]:
        """The elements of one type the page shows now: the last version of each, on a
        message still there."""
        last = {e["id"]: e for e in self.elements if e["type"] == kind}
        return [e for e in last.values() if e["forId"] in self.messages]


class History:
    """The data layer: what a reopened thread would be built from."""

    def __init__(self) -> None:
        self.steps: dict[str, dict] = {}
        self.elements: dict[str, dict] = {}

    async def create_step(self, step_dict):
        self.steps[step_dict["id"]] = step_dict

    async def update_step(self, step_dict):
        self.steps[step_dict["id"]] = step_dict

    async def delete_step(self, step_id):
        self.steps.pop(step_id, None)
        self.elements = {k: e for k, e in self.elements.items() if e.for_id != step_id}

    async def create_element(self, element):
        self.elements[element.id] = element

    async def delete_element(self, element_id, thread_id=None):
        self.elements.pop(element_id, None)


def on_page(monkeypatch) -> tuple[Screen, History]:
    """A Chainlit context for the running task: its emitter is the screen, its data layer
    the history."""
    session = HTTPSession(id=f"team-picture-{uuid.uuid4()}", client_type="webapp", thread_id="t-1")
    session.language = "en-US"
    screen = Screen(session)

    async def persist_file(name, mime, path=None, content=None):
        file_id = str(uuid.uuid4())
        screen.files[file_id] = content
        return {"id": file_id}

    monkeypatch.setattr(session, "persist_file", persist_file)
    context_var.set(ChainlitContext(session, screen))
    history = History()
    monkeypatch.setattr(cl_message, "get_data_layer", lambda: history)
    monkeypatch.setattr(cl_element, "get_data_layer", lambda: history)
    return screen, history


def nodes_in(plotly_json: str) -> set[str]:
    figure = pio.from_json(plotly_json)
    return {i for t in figure.data if t.ids is not None for i in t.ids}


async def settle(history_writes: int = 3) -> None:
    for _ in range(history_writes):  # Chainlit writes the history in tasks of their own
        await asyncio.sleep(0)


class StillClock:
    """`time.monotonic` for the picture: it moves only when told, so that a slow draw on a
    busy machine does not use up the interval (the redraw's wait is still real time)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


async def test_the_live_picture_is_one_element_redrawn_in_place_at_most_once_a_interval(
    monkeypatch,
):
    screen, history = on_page(monkeypatch)
    clock = StillClock()
    monkeypatch.setattr(team_picture, "time", clock)
    society = AgentSociety()
    live = LivePicture(society, interval=1.0)
    await live.changed()
    assert screen.elements == [] and screen.messages == {}  # root alone is no society yet
    spawn_in(society, ROOT_ID, "分析师")
    await live.changed()  # the first change is drawn at once
    assert len(screen.elements) == 1 and nodes_in(screen.elements[0]["content"]) >= {"agent-1"}
    spawn_in(society, ROOT_ID, "写作者")
    await live.changed()
    spawn_in(society, "agent-1", "术语专家")
    await live.changed()  # within the interval: one redraw is due, not two
    assert len(screen.elements) == 1
    await asyncio.wait_for(live._later, timeout=5)
    assert len(screen.elements) == 2 and live.redraws == 2
    assert nodes_in(screen.elements[1]["content"]) >= {"agent-1", "agent-2", "agent-3"}
    assert screen.elements[0]["id"] == screen.elements[1]["id"]  # the same element, redrawn
    assert {e["forId"] for e in screen.elements} == {live.message.id}
    clock.now += 1.05
    await live.changed()  # nothing changed: nothing sent
    assert len(screen.elements) == 2
    await settle()
    assert history.steps == {} and history.elements == {}  # the live picture is not stored
    live_id = live.message.id
    await live.close()
    assert live_id in screen.removed and screen.shown("plotly") == []


async def test_a_run_shows_the_picture_live_and_ends_with_one_stored_picture_and_the_record(
    monkeypatch, factory, llm_server
):
    screen, history = on_page(monkeypatch)
    need = {"reason": "需要功能需求", "required_capability": "功能需求分析"}
    llm_server.script(
        *turn("root", role("分析师"), role("写作者"), spawn("分析师"), spawn("写作者")),
        *turn("agent-1", then="等待请求。"),
        *turn("agent-2", say("root", "introduction_request", "", need)),
        *turn("root", say("agent-2", "introduction_response", "", {"target_id": "agent-1"})),
        *turn("agent-2", say("agent-1", "collaboration_request", "请给 FR 列表", reason="初稿")),
        *turn("agent-1", say("agent-2", "collaboration_response", "FR-1 发布商品")),
        *turn("agent-2", say("root", "status_report", "SRS 初稿已完成", {"status": "done"})),
        answer("SRS 初稿：FR-1 发布商品。"),
    )  # fmt: skip
    run = TeamRun(factory, TeamConfig())
    view = TeamViews(run)
    view.picture.interval = 0.0  # every change drawn: the test counts them
    live = LiveRun(view)
    async for event in run.events("写 SRS 初稿"):
        await live.show(event)
    await view.final_picture()  # as on_team_message's `finally` does: nothing more
    await settle()

    live = [e for e in screen.elements if e["name"] == "society-live"]
    assert len(live) >= 3 and len({e["id"] for e in live}) == 1  # redrawn in place, live
    assert nodes_in(live[0]["content"]) < nodes_in(live[-1]["content"])  # grew as agents came
    # one picture on the page now: the final one, with every agent and the messages between
    (final,) = screen.shown("plotly")
    assert final["name"] == "society"
    assert nodes_in(final["content"]) == {"user", "root", "agent-1", "agent-2"}
    figure = json.loads(final["content"])
    assert any(
        t.get("text") and "agent-2 → agent-1" in str(t.get("hovertext")) for t in figure["data"]
    )
    assert "The society" in screen.messages[final["forId"]]
    assert "agent-1 (introduced · root)" in screen.messages[final["forId"]]  # the details
    # the history keeps the final picture and the record, and nothing of the live picture
    stored = {e.name: e for e in history.elements.values()}
    assert set(stored) == {"society", "team-record.json"}
    assert stored["society"].for_id in history.steps
    assert live[0]["forId"] not in history.steps
    assert len(view.society.agents) == 3
