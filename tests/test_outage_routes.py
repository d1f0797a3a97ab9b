"""The history list when the database cannot answer in time: one sentence and a 503, not a 500
(the load benchmark saw pool timeouts at 50 users on one instance)."""

from __future__ import annotations

import pytest
from fastapi import HTTPException
from sqlalchemy.exc import TimeoutError as PoolTimeout
from starlette.requests import Request

import reqstudio.web.outage as outage


def request(language: str) -> Request:
    headers = [(b"accept-language", language.encode())]
    return Request(
        {"type": "http", "method": "POST", "path": "/project/threads", "headers": headers}
    )


@pytest.mark.parametrize(("language", "said"), [("zh-CN", "数据库"), ("en-US", "database")])
async def test_a_pool_timeout_is_a_503_in_the_users_language(monkeypatch, language, said):
    async def timing_out(*args, **kwargs):
        raise PoolTimeout("QueuePool limit of size 5 overflow 10 reached, timed out")

    monkeypatch.setattr(outage.chainlit_server, "get_user_threads", timing_out)
    with pytest.raises(HTTPException) as refused:
        await outage.list_threads(request(language), None, None)
    assert refused.value.status_code == 503
    assert said in refused.value.detail.lower()


async def test_any_other_failure_is_left_as_it_is(monkeypatch):
    async def failing(*args, **kwargs):
        raise KeyError("a bug, not the database")

    monkeypatch.setattr(outage.chainlit_server, "get_user_threads", failing)
    with pytest.raises(KeyError):
        await outage.list_threads(request("en-US"), None, None)
