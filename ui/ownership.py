"""Every route that writes checks that the thread is the caller's.

Chainlit's `PUT /feedback` and `DELETE /feedback` write whatever step and feedback ids they
are given: user B could rate, overwrite or delete feedback on user A's thread. The routes
here stand in front of Chainlit's own (same paths, same bodies), check that the step, its
thread and any feedback being replaced belong to the caller, and then hand over to Chainlit.
Unknown ids answer 404, someone else's 404 too (an id of another user's is not confirmed)."""

from __future__ import annotations

from chainlit import server as chainlit_server
from chainlit.data import get_data_layer
from chainlit.types import DeleteFeedbackRequest, UpdateFeedbackRequest
from fastapi import APIRouter, HTTPException, Request
from fastapi.routing import APIRoute

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


def guard_writes() -> None:
    """Put the checked routes in front of Chainlit's (the first matching route answers)."""
    app = chainlit_server.app
    ours = [route for route in router.routes if isinstance(route, APIRoute)]
    for route in reversed(ours):
        app.router.routes.insert(0, route)
