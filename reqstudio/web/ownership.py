"""Every route that writes checks that the thread is the caller's.

Chainlit's `PUT /feedback` and `DELETE /feedback` write whatever step and feedback ids they
are given: user B could rate, overwrite or delete feedback on user A's thread. Its
`PUT /project/element` and `DELETE /project/element` take the element's id and thread from
the request and check only that the session is the caller's: B could replace or delete A's
uploaded file. An action's `run` (the Resume buttons of SRS, Rewrite and Review) names a
thread's saved run, and the callbacks trust it: B could resume A's run in his own session.
The routes here stand in front of Chainlit's own (same paths, same bodies), check that the
threads and rows they name belong to the caller, and then hand over to Chainlit.
Unknown ids answer 404, someone else's 404 too (an id of another user's is not confirmed).
With thread sharing off (`allow_thread_sharing`), shared-thread reads and sharing answer 404."""

from __future__ import annotations

from chainlit import server as chainlit_server
from chainlit.config import config
from chainlit.data import get_data_layer
from chainlit.session import WebsocketSession
from chainlit.types import (
    CallActionRequest,
    DeleteFeedbackRequest,
    DisconnectMCPRequest,
    ElementRequest,
    ShareThreadRequest,
    UpdateFeedbackRequest,
)
from fastapi import APIRouter, HTTPException, Request

router = APIRouter()
NOT_FOUND = HTTPException(status_code=404, detail="Not found")


async def _rows(query: str, **parameters: str) -> list[dict]:
    layer = get_data_layer()
    if layer is None:
        raise HTTPException(status_code=400, detail="Data persistence is not enabled")
    result = await layer.execute_sql(query=query, parameters=parameters)  # type: ignore[attr-defined]
    return result if isinstance(result, list) else []


async def _require_own_thread(thread_id: str | None, identifier: str) -> None:
    if not thread_id:
        raise NOT_FOUND
    rows = await _rows('SELECT "userIdentifier" FROM threads WHERE "id" = :id', id=thread_id)
    if not rows or rows[0].get("userIdentifier") != identifier:
        raise NOT_FOUND


async def _thread_of_step(step_id: str) -> str | None:
    rows = await _rows('SELECT "threadId" FROM steps WHERE "id" = :id', id=step_id)
    return rows[0].get("threadId") if rows else None


async def _thread_of_feedback(feedback_id: str) -> str | None:
    rows = await _rows('SELECT "threadId" FROM feedbacks WHERE "id" = :id', id=feedback_id)
    return rows[0].get("threadId") if rows else None


async def _element(element_id: str) -> dict | None:
    rows = await _rows('SELECT "threadId" FROM elements WHERE "id" = :id', id=element_id)
    return rows[0] if rows else None


def _own_session(session_id: str, identifier: str) -> WebsocketSession:
    session = WebsocketSession.get_by_id(session_id)
    if session is None or session.user is None or session.user.identifier != identifier:
        raise NOT_FOUND
    return session


def _sharing_on() -> bool:
    return bool(getattr(config.features, "allow_thread_sharing", False))


@router.put("/feedback")
async def update_feedback(
    request: Request, update: UpdateFeedbackRequest, current_user: chainlit_server.UserParam
):
    feedback = update.feedback
    thread_id = await _thread_of_step(feedback.forId)
    if feedback.threadId and feedback.threadId != thread_id:
        raise NOT_FOUND  # a step of one thread filed under another
    await _require_own_thread(thread_id, current_user.identifier)
    if feedback.id:  # replacing a feedback: it must be on this same thread
        replaced = await _thread_of_feedback(feedback.id)
        if replaced is not None and replaced != thread_id:
            raise NOT_FOUND
    feedback.threadId = thread_id
    return await chainlit_server.update_feedback(request, update, current_user)


@router.delete("/feedback")
async def delete_feedback(
    request: Request, payload: DeleteFeedbackRequest, current_user: chainlit_server.UserParam
):
    thread_id = await _thread_of_feedback(payload.feedbackId)
    await _require_own_thread(thread_id, current_user.identifier)
    return await chainlit_server.delete_feedback(request, payload, current_user)


@router.get("/project/thread/{thread_id}/element/{element_id}")
async def get_thread_element(
    request: Request, thread_id: str, element_id: str, current_user: chainlit_server.UserParam
):
    await _require_own_thread(thread_id, current_user.identifier)
    found = await _element(element_id)
    if found is None or found.get("threadId") != thread_id:
        raise NOT_FOUND
    return await chainlit_server.get_thread_element(request, thread_id, element_id, current_user)


async def _require_element_writable(payload: ElementRequest, identifier: str) -> None:
    """The element's thread is the caller's (or the caller's session's, not stored yet), and
    an element stored under that id is in a thread of the caller's."""
    session = _own_session(payload.sessionId, identifier)
    element = payload.element
    thread_id = element.get("threadId") or session.thread_id
    if thread_id != session.thread_id:
        await _require_own_thread(thread_id, identifier)
    if element.get("id") and (stored := await _element(str(element["id"]))) is not None:
        await _require_own_thread(stored.get("threadId"), identifier)


@router.put("/project/element")
async def update_thread_element(payload: ElementRequest, current_user: chainlit_server.UserParam):
    await _require_element_writable(payload, current_user.identifier)
    return await chainlit_server.update_thread_element(payload, current_user)


@router.delete("/project/element")
async def delete_thread_element(payload: ElementRequest, current_user: chainlit_server.UserParam):
    await _require_element_writable(payload, current_user.identifier)
    return await chainlit_server.delete_thread_element(payload, current_user)


@router.post("/project/action")
async def call_action(payload: CallActionRequest, current_user: chainlit_server.UserParam):
    session = _own_session(payload.sessionId, current_user.identifier)
    run = (payload.action.get("payload") or {}).get("run")
    if run is not None:  # a saved run is named `<thread id>:...`: the thread must be theirs
        thread_id = str(run).partition(":")[0]
        if thread_id != session.thread_id:
            await _require_own_thread(thread_id, current_user.identifier)
    return await chainlit_server.call_action(payload, current_user)


@router.delete("/mcp")
async def disconnect_mcp(payload: DisconnectMCPRequest, current_user: chainlit_server.UserParam):
    _own_session(payload.sessionId, current_user.identifier)  # Chainlit: 500 when unknown
    return await chainlit_server.disconnect_mcp(payload, current_user)


@router.get("/project/share/{thread_id}")
async def get_shared_thread(
    request: Request, thread_id: str, current_user: chainlit_server.UserParam
):
    if not _sharing_on() or current_user is None:  # shared with signed-in users only
        raise NOT_FOUND
    return await chainlit_server.get_shared_thread(request, thread_id, current_user)


@router.put("/project/thread/share")
async def share_thread(
    request: Request, payload: ShareThreadRequest, current_user: chainlit_server.UserParam
):
    if not _sharing_on():
        raise NOT_FOUND
    return await chainlit_server.share_thread(request, payload, current_user)
