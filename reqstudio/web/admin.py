"""The administrator's page: accounts (approve, disable, enable) and usage per user and mode.

`/reqstudio/admin` is a plain page (Chinese and English) for administrators: accounts made
with `--admin`, those named by REQSTUDIO_ADMINS, and the local user when no sign-in is
configured. The same data is JSON at `/reqstudio/admin/users` and `/reqstudio/admin/usage`, and
`POST /reqstudio/admin/users/{name}/approve|disable|enable` changes an account (approve: a
single sign-on identity waiting for approval may sign in). Everyone else gets 403; without a
valid sign-in, 401.
"""

from __future__ import annotations

import logging
from dataclasses import asdict
from html import escape
from urllib.parse import quote

import chainlit as cl
from chainlit.auth import authenticate_user
from chainlit.data import get_data_layer
from chainlit.user import PersistedUser, User
from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from reqstudio.accounts import Account, AccountError
from reqstudio.usage import UsageTracker
from reqstudio.usage_ledger import UsageLine, record_turn, usage_by_user_and_mode
from reqstudio.web.revocation import token_of
from reqstudio.web.sign_in import SignIn, forget_account_check

log = logging.getLogger("reqstudio.admin")

router = APIRouter()
_STATE: dict[str, object] = {}


def _sign_in() -> SignIn:
    return _STATE["sign_in"]  # type: ignore[return-value]


async def _sql(query: str, **parameters) -> list[dict]:
    layer = get_data_layer()
    rows = await layer.execute_sql(query=query, parameters=parameters) if layer else []  # type: ignore[attr-defined]
    return rows if isinstance(rows, list) else []


async def record_usage(mode: str, tracker: UsageTracker) -> None:
    """A turn's tokens under its user and mode; a failure costs the statistics, not the turn."""
    user = cl.context.session.user
    try:
        await record_turn(_sql, user.identifier if user else "local", mode, tracker)
    except Exception:
        log.exception("could not record usage")


async def administrator(request: Request) -> User | PersistedUser:
    token = token_of({k.lower(): v for k, v in request.headers.items()})
    if not token:
        raise HTTPException(status_code=401, detail="sign in first")
    user = await authenticate_user(token)  # 401 for a bad or expired token
    sign_in = _sign_in()
    if not sign_in.configured:
        return user  # the one local user administers their own machine
    account = await sign_in.store.get(user.identifier)
    if account is None or not account.is_admin or account.disabled or account.pending:
        log.warning("admin page refused to %r", user.identifier)
        raise HTTPException(status_code=403, detail="administrators only")
    return user


def _account_json(account: Account) -> dict:
    return {
        "identifier": account.identifier,
        "display_name": account.display_name,
        "provider": account.provider,
        "admin": account.is_admin,
        "disabled": account.disabled,
        "pending": account.pending,
        "created_at": account.created_at,
        "last_sign_in": account.last_sign_in,
    }


def _usage_json(line: UsageLine) -> dict:
    return {**asdict(line), "total_tokens": line.total_tokens}


async def _usage() -> list[UsageLine]:
    return await usage_by_user_and_mode(_sql, dict(_STATE["prices"]))  # type: ignore[call-overload]


@router.get("/reqstudio/admin/users")
async def list_accounts(request: Request) -> JSONResponse:
    await administrator(request)
    return JSONResponse([_account_json(a) for a in await _sign_in().store.list()])


@router.get("/reqstudio/admin/usage")
async def usage(request: Request) -> JSONResponse:
    await administrator(request)
    return JSONResponse([_usage_json(line) for line in await _usage()])


_DONE = {"disable": "disabled", "enable": "enabled", "approve": "approved"}


@router.post("/reqstudio/admin/users/{name}/{action}")
async def change_account(name: str, action: str, request: Request) -> Response:
    admin = await administrator(request)
    if action not in _DONE:
        raise HTTPException(status_code=404, detail="unknown action")
    if action == "disable" and name == admin.identifier:
        raise HTTPException(status_code=400, detail="an administrator cannot disable themself")
    store = _sign_in().store
    try:
        if action == "approve":
            account = await store.approve(name)
        else:
            await store.set_disabled(name, action == "disable")
            account = await store.get(name)
        forget_account_check(name)
    except AccountError as error:
        raise HTTPException(status_code=404, detail=str(error)) from None
    log.info("%s %s the account %r", admin.identifier, _DONE[action], name)
    if "application/json" in request.headers.get("accept", ""):
        if account is None:  # removed meanwhile (`reqstudio users remove`)
            raise HTTPException(status_code=404, detail=f"no user {name!r}")
        return JSONResponse(_account_json(account))
    return RedirectResponse("/reqstudio/admin", status_code=303)  # the page's own form


def _button(identifier: str, action: str, label: str) -> str:
    return (
        f"<form method='post' action='/reqstudio/admin/users/{quote(identifier, safe='')}/"
        f"{action}'><button type='submit'>{label}</button></form>"
    )


def _state(account: Account) -> str:
    if account.disabled:
        return "已停用 / disabled"
    return "待批准 / pending" if account.pending else "正常 / active"


def _page(accounts: list[Account], lines: list[UsageLine], viewer: str) -> str:
    rows = []
    for a in accounts:
        buttons = ""  # an administrator does not lock themself out
        if a.identifier != viewer:
            if a.pending:
                buttons = _button(a.identifier, "approve", "批准 / Approve")
            buttons += (
                _button(a.identifier, "enable", "启用 / Enable")
                if a.disabled
                else _button(a.identifier, "disable", "停用 / Disable")
            )
        rows.append(
            f"<tr><td>{escape(a.identifier)}</td><td>{escape(a.display_name)}</td>"
            f"<td>{escape(a.provider)}</td><td>{'管理员 / admin' if a.is_admin else '用户 / user'}"
            f"</td><td>{_state(a)}</td><td>{escape(a.last_sign_in or '-')}</td><td>{buttons}"
            "</td></tr>"
        )
    usage_rows = [
        f"<tr><td>{escape(u.user)}</td><td>{escape(u.mode)}</td><td>{escape(u.model)}</td>"
        f"<td>{u.calls}</td><td>{u.input_tokens}</td><td>{u.output_tokens}</td>"
        f"<td>{'-' if u.cost is None else f'${u.cost:.4f}'}</td></tr>"
        for u in lines
    ]
    return (
        "<!doctype html><html lang='zh-CN'><head><meta charset='utf-8'>"
        "<title>ReqStudio 管理 / Admin</title><style>body{font-family:sans-serif;margin:2rem}"
        "table{border-collapse:collapse;margin-bottom:2rem}td,th{border:1px solid #ccc;"
        "padding:.3rem .6rem;text-align:left}</style></head><body>"
        "<p><a href='/'>← ReqStudio</a></p><h1>用户 / Users</h1><table id='users'><tr>"
        "<th>账号 / Account</th><th>名称 / Name</th><th>登录方式 / Sign-in</th>"
        "<th>角色 / Role</th><th>状态 / State</th><th>最近登录 / Last sign-in</th><th></th></tr>"
        + "".join(rows)
        + "</table><h1>用量 / Usage</h1><table id='usage'><tr><th>用户 / User</th>"
        "<th>模式 / Mode</th><th>模型 / Model</th><th>调用 / Calls</th><th>输入 / In</th>"
        "<th>输出 / Out</th><th>估算费用 / Cost</th></tr>"
        + "".join(usage_rows)
        + "</table><p>费用按 AGENT_PRICES（每千 token）估算；“-” 表示该模型没有价格。 / "
        "Costs from AGENT_PRICES (per 1k tokens); '-': no price for that model.</p></body></html>"
    )


@router.get("/reqstudio/admin")
async def admin_page(request: Request) -> HTMLResponse:
    admin = await administrator(request)
    return HTMLResponse(_page(await _sign_in().store.list(), await _usage(), admin.identifier))


def configure_admin_page(sign_in: SignIn, prices: dict[str, tuple[float, float]]) -> None:
    """Who may administer and the prices the usage table uses; `router` is put in front of
    Chainlit's catch-all page route by reqstudio/web/chainlit_seam.py."""
    _STATE.update(sign_in=sign_in, prices=prices)
