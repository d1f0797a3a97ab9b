"""Chainlit's internals are changed in one module, and only on the Chainlit it was written for.

Every assignment to an attribute of `chainlit` or `uvicorn` (their modules, classes, objects and
settings) and every route put in front of Chainlit's lives in `reqstudio/web/chainlit_seam.py`;
on another Chainlit version the app refuses to start with one line, unless told to try."""

from __future__ import annotations

import ast
import os
import re
import tomllib
from pathlib import Path

import httpx
import pytest

from reqstudio.web import chainlit_seam
from tests.apps import ROOT, running_app
from tests.test_app_startup import start_app

PACKAGE = ROOT / "reqstudio"
SEAM = PACKAGE / "web" / "chainlit_seam.py"
PATCHED = ("chainlit", "uvicorn")
# Calls that add a route or a middleware to a web app, whatever the app is called.
ROUTING_CALLS = {
    "add_api_route",
    "add_route",
    "add_websocket_route",
    "add_middleware",
    "include_router",
    "mount",
}


def _root(node: ast.AST) -> str | None:
    """The name an attribute/subscript chain starts from (`a` in `a.b[c].d`), or None when
    the chain passes through a call (an object made by calling, not Chainlit's own)."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


# The running session's own objects (`cl.context.session`, `cl.user_session`): per-connection
# state the app keeps, not Chainlit's code or settings.
SESSION_STATE = {"context", "user_session"}


def _attributes(node: ast.AST) -> list[str]:
    names = []
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
        node = node.value
    return names


def _chainlit_root(node: ast.AST) -> str | None:
    """`_root`, except for chains through the running session's state."""
    return None if SESSION_STATE & set(_attributes(node)) else _root(node)


def _patched_names(tree: ast.AST) -> set[str]:
    """Names bound, anywhere in the module, to Chainlit or uvicorn (their modules or what was
    imported from them), and names bound to chains of attributes of those."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PATCHED:
                    names.add(alias.asname or alias.name.split(".")[0])
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] in PATCHED
        ):
            names.update(alias.asname or alias.name for alias in node.names)
    changed = True
    while changed:  # `handlers = chainlit.socket.sio.handlers["/"]` makes `handlers` one too
        changed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and _chainlit_root(node.value) in names:
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id not in names:
                        names.add(target.id)
                        changed = True
    return names


def seam_breaches(source: str) -> list[str]:
    """What in `source` changes Chainlit or uvicorn, or routes, outside the seam."""
    tree = ast.parse(source)
    patched = _patched_names(tree)
    found = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            if not isinstance(target, ast.Attribute | ast.Subscript):
                continue
            if _chainlit_root(target) in patched:
                found.append(f"line {node.lineno}: assigns to {ast.unparse(target)}")
            elif "routes" in _attributes(target):
                found.append(f"line {node.lineno}: changes the routes {ast.unparse(target)}")
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        if isinstance(function, ast.Name) and function.id in ("setattr", "delattr"):
            if node.args and _chainlit_root(node.args[0]) in patched:
                found.append(f"line {node.lineno}: {function.id} on {ast.unparse(node.args[0])}")
        elif isinstance(function, ast.Attribute):
            adds_route = function.attr in ("insert", "append", "extend") and (
                "routes" in _attributes(function.value)
            )
            if function.attr in ROUTING_CALLS or adds_route:
                found.append(f"line {node.lineno}: {ast.unparse(function)}")
    return found


@pytest.mark.parametrize(
    "source",
    [
        "import chainlit.config\nchainlit.config.FILES_DIRECTORY = 'x'",
        "from chainlit import server as s\ns.get_html_template = print",
        "import chainlit as cl\ncl.Message.send = print",
        "from chainlit.config import config\nconfig.features.allow_thread_sharing = True",
        "from chainlit.emitter import ChainlitEmitter as E\nsetattr(E, 'emit', None)",
        "def f():\n    import uvicorn.config\n    uvicorn.config.ProxyHeadersMiddleware = object",
        "import chainlit.socket\nh = chainlit.socket.sio.handlers['/']\nh['connect'] = print",
        "from chainlit.server import app\napp.router.routes.insert(0, None)",
        "def f(app):\n    app.router.routes[0:0] = []",
        "def f(router):\n    router.add_api_route('/x', print)",
        "from chainlit.server import app\napp.add_middleware(object)",
    ],
)
def test_the_scan_finds_each_kind_of_change(source):
    assert seam_breaches(source) != []


@pytest.mark.parametrize(
    "source",
    [
        "import chainlit as cl\nm = cl.Message(content='')\nm.parent_id = None",
        "def f(message):\n    message.content = 'x'",
        "from chainlit.config import config\nif config.code.on_message: pass",
        "import chainlit as cl\ns = cl.context.session\ns.current_task = None",
        "import chainlit as cl\ncl.context.session.chat_settings['k'] = 1",
    ],
)
def test_the_scan_leaves_chainlit_objects_the_app_made_alone(source):
    assert seam_breaches(source) == []


def test_only_the_seam_changes_chainlit_or_routes():
    breaches = {
        str(path.relative_to(ROOT)): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != SEAM and (found := seam_breaches(path.read_text(encoding="utf-8")))
    }
    assert breaches == {}


def test_the_seam_is_written_for_the_pinned_chainlit():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pins = [d for d in project["project"]["dependencies"] if re.match(r"chainlit\b", d)]
    assert pins == [f"chainlit=={chainlit_seam.WRITTEN_FOR[-1]}"]


def _another_chainlit(folder: Path) -> dict[str, str]:
    """Settings for a Python that reports Chainlit 9.9.9 installed (`sitecustomize` runs
    before the app imports anything)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "import importlib.metadata as m\n"
        "_version = m.version\n"
        "m.version = lambda name: '9.9.9' if name == 'chainlit' else _version(name)\n",
        encoding="utf-8",
    )
    path = [str(folder), str(ROOT), os.environ.get("PYTHONPATH", "")]
    return {"PYTHONPATH": os.pathsep.join(p for p in path if p)}


def test_another_chainlit_version_stops_startup_with_one_line(tmp_path: Path):
    output = start_app(tmp_path / "data", **_another_chainlit(tmp_path / "site"))
    lines = [line for line in output.splitlines() if "Chainlit" in line]
    assert lines == [
        "ReqStudio cannot start. Chainlit 9.9.9 is installed, but ReqStudio was written for "
        f"Chainlit {chainlit_seam.WRITTEN_FOR[-1]}: install "
        f"chainlit=={chainlit_seam.WRITTEN_FOR[-1]}, or set "
        "REQSTUDIO_CHAINLIT_ANY_VERSION=1 to try this version anyway."
    ]


def test_another_chainlit_version_starts_when_told_to_try(tmp_path: Path):
    env = _another_chainlit(tmp_path / "site") | {
        "REQSTUDIO_CHAINLIT_ANY_VERSION": "1",
        "OPENAI_API_KEY": "sk-test",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # never asked: no message is sent
    }
    with running_app(tmp_path / "data", env) as app:
        assert httpx.get(f"{app.url}/reqstudio/health", timeout=10).json() == {"status": "ok"}
        log = app.log()
    assert "Chainlit 9.9.9 is installed" in log and "trying anyway" in log
