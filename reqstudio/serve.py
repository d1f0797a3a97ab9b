"""`reqstudio serve`: the web app from the installed package, as `chainlit run app.py` serves it
from a checkout.

Chainlit reads its configuration, translations, public assets and the in-app Readme from one
folder (its app root) and writes its upload scratch folder (`.files`) there, so the installed
package's copy (`reqstudio/web/site/`, read-only in site-packages) is copied into the data
directory at every start: an upgrade brings its new files, and nothing is written into the
installation. Then `chainlit run` takes over the process (exec): signals reach the server
directly, and the exit code is the server's. The app itself refuses a listening address beyond
loopback without sign-in (`reqstudio.bind_check`), whoever started it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from importlib import resources
from pathlib import Path

from reqstudio import cli as harness

# The app's entry module in the app root: importing the package's app registers its handlers.
ENTRY = (
    '"""Written by `reqstudio serve` at every start."""\n\nimport reqstudio.web.app  # noqa: F401\n'
)
SITE_ENTRIES = (".chainlit", "public", "chainlit.md", "chainlit_zh-CN.md")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = harness.add_command(
        subparsers,
        "serve",
        description=(
            "Serve the ReqStudio web app. Without a provider (OPENAI_API_KEY) it starts the "
            "bundled offline demo model. Beyond loopback (--host 0.0.0.0) it needs sign-in "
            "configured (see the docs: Sign-in and security)."
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port to listen on (8000)")
    parser.set_defaults(handler=serve)


def prepare_app_root(data_dir: Path) -> Path:
    """`data_dir/app`: the package's Chainlit folder, copied fresh, and the entry module."""
    root = data_dir.resolve() / "app"
    root.mkdir(parents=True, exist_ok=True)
    site = resources.files("reqstudio.web") / "site"
    with resources.as_file(site) as source:
        for name in SITE_ENTRIES:
            target = root / name
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            if (source / name).is_dir():
                shutil.copytree(source / name, target)
            else:
                shutil.copyfile(source / name, target)
    (root / "app.py").write_text(ENTRY, encoding="utf-8")
    return root


def chainlit_command(entry: Path, host: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from chainlit.cli import cli; cli()",
        "run",
        str(entry),
        "--headless",
        "--host",
        host,
        "--port",
        str(port),
    ]


def serve(args: argparse.Namespace) -> int:
    if not 0 < args.port < 65536:
        raise harness.UsageError(f"--port: {args.port} is not a port number (1-65535)")
    from reqstudio.settings import get_settings

    settings = get_settings()
    root = prepare_app_root(settings.data_dir)
    env = dict(os.environ)
    env["CHAINLIT_APP_ROOT"] = str(root)
    # the data directory stays where the settings put it, whatever Chainlit's root is
    env["REQSTUDIO_DATA_DIR"] = str(settings.data_dir.resolve())
    # MCP stdio servers (mcp-server-time) are installed beside this interpreter
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    command = chainlit_command(root / "app.py", args.host, args.port)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(command[0], command, env)
    return harness.EXIT_FAILED  # pragma: no cover - execve does not return
