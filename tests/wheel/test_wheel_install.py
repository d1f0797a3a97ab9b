"""ReqStudio as a user installs it: the README's install lines, run as written in a copy of the
checkout's tracked files (so nothing untracked reaches the build) inside a fresh virtual
environment outside the checkout; then, from that environment, in a folder outside the
checkout and with no PYTHONPATH: the wheel's contents, `reqstudio serve` without a provider
(the offline demo model) and with the scripted provider (a sign-in, one Chat turn and one SRS
run in the browser), `reqstudio check` and `reqstudio srs generate`.

pip installs the dependencies from its cache (llama.cpp's wheel as set-up built it), so the
install takes about 90 s here. Timings go to test-output/wheel-timings.json. Runs as a step of
its own in .ci/run (`pytest -m wheel tests/wheel`), not in the default suite.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, expect

from reqstudio.local_model import free_port
from tests import browser_support as web
from tests import test_srs_support as srs
from tests.apps import stop_gently
from tests.scripted_server import Reply, ScriptedLLMServer

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
DIST_INFO = f"reqstudio-{VERSION}.dist-info"
TIMINGS: dict[str, float] = {}
PASSWORD = "wheel-pass-1"

# What the caller's shell or the test run sets that would change what the installed app does
# or where Python finds its modules: none of it reaches the installed environment.
CLEARED_PREFIXES = ("OPENAI_", "REQSTUDIO_", "CHAINLIT_", "AGENT_", "TEAM_", "SRS_", "REWRITE_")
CLEARED = ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "CI", "DATABASE_URL")


def readme_install_blocks() -> list[list[str]]:
    """The fenced bash blocks of the README's "Install" section, before its subsections: the
    install itself (ending with the run command), then how to build the wheel from a checkout."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = re.search(r"^## Install\n(.*?)(?=^##)", text, re.S | re.M)
    assert section, 'README.md has no "## Install" section'
    blocks = re.findall(r"^```bash\n(.*?)^```", section.group(1), re.S | re.M)
    assert len(blocks) == 2, 'the "## Install" section has not two ```bash blocks'
    return [[line.strip() for line in b.splitlines() if line.strip()] for b in blocks]


def tracked_files(folder: str = "") -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", folder or "."],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return [name for name in listed.stdout.split("\0") if name]


def copy_tracked_tree(target: Path) -> None:
    """The checkout's tracked files as they are now (edits included), symbolic links kept."""
    for name in tracked_files():
        source, copy = ROOT / name, target / name
        if not source.is_symlink() and not source.exists():
            continue  # deleted in the working tree
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            copy.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, copy)


@dataclass
class Installed:
    venv: Path
    source: Path  # the copy the README's lines ran in
    elsewhere: Path  # a folder outside the checkout and the copy: the working folder below
    env: dict[str, str]  # the activated environment: its bin first, nothing of the checkout's
    wheel: Path
    sdist: Path

    def program(self, name: str) -> str:
        return str(self.venv / "bin" / name)

    def run(self, *args: str, env: dict[str, str] | None = None, input: str | None = None,
            timeout: float = 120) -> subprocess.CompletedProcess:  # fmt: skip
        return subprocess.run(
            [self.program("reqstudio"), *args], cwd=self.elsewhere, env=env or self.env,
            input=input, capture_output=True, text=True, encoding="utf-8", timeout=timeout,
        )  # fmt: skip


def activated_env(venv: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in CLEARED and not k.startswith(CLEARED_PREFIXES)
    }
    # the test's own environment (where the checkout is installed) is off the PATH
    ours = str(Path(sys.executable).parent)
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != ours]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["VIRTUAL_ENV"] = str(venv)
    env["PYTHONIOENCODING"] = "utf-8"
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    started = time.monotonic()
    work = tmp_path_factory.mktemp("wheel")
    assert not work.resolve().is_relative_to(ROOT)
    source, venv, elsewhere = work / "reqstudio-src", work / "env", work / "elsewhere"
    elsewhere.mkdir()
    copy_tracked_tree(source)
    # a fresh environment from the interpreter itself, not from the test's virtual environment
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=120)
    TIMINGS["venv_s"] = time.monotonic() - started

    lines, build = readme_install_blocks()
    # two commands: the install, and the run command (started by the tests below)
    assert len(lines) == 2 and lines[-1] == "reqstudio serve", lines
    env = activated_env(venv)
    for commands, where in ((build, source), (lines[:-1], source / "dist")):
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", "\n".join(commands)],
            cwd=where, env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        assert done.returncode == 0, f"{commands}\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
    TIMINGS["readme_install_s"] = time.monotonic() - started - TIMINGS["venv_s"]
    wheels, sdists = sorted((source / "dist").glob("*.whl")), sorted((source / "dist").glob("*.gz"))
    assert [w.name for w in wheels] == [f"reqstudio-{VERSION}-py3-none-any.whl"], wheels
    assert [s.name for s in sdists] == [f"reqstudio-{VERSION}.tar.gz"], sdists
    yield Installed(venv, source, elsewhere, env, wheels[0], sdists[0])
    TIMINGS["total_s"] = time.monotonic() - started
    output = ROOT / "test-output"
    output.mkdir(exist_ok=True)
    (output / "wheel-timings.json").write_text(json.dumps(TIMINGS, indent=2) + "\n")


def data_files_in_the_tree() -> list[str]:
    """Every tracked file under reqstudio/ that is not a module: what the app opens."""
    return [name for name in tracked_files("reqstudio") if not name.endswith(".py")]


def test_the_wheel_holds_reqstudio_alone_with_every_file_the_app_opens(installed: Installed):
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = set(wheel.namelist())
        record = wheel.read(f"{DIST_INFO}/RECORD").decode()
        top_level = wheel.read(f"{DIST_INFO}/top_level.txt").decode().split()
    recorded = {row.split(",")[0] for row in record.splitlines() if row}
    assert recorded == names
    assert {name.split("/")[0] for name in names} == {"reqstudio", DIST_INFO}
    assert top_level == ["reqstudio"]

    wanted = data_files_in_the_tree()
    # each kind the app reads: prompts, catalogues, Chainlit's folder (configuration,
    # translations, public assets, in-app Readme), the MCP configuration, the checker's data
    for kind in ("reqstudio/prompts/", "reqstudio/locales/", "reqstudio/web/site/public/",
                 "reqstudio/web/site/.chainlit/translations/", "reqstudio/check/data/"):  # fmt: skip
        assert any(name.startswith(kind) for name in wanted), kind
    for name in ("reqstudio/web/site/.chainlit/config.toml", "reqstudio/web/site/chainlit.md",
                 "reqstudio/web/site/chainlit_zh-CN.md", "reqstudio/tools/mcp.json"):  # fmt: skip
        assert name in wanted, name
    assert sorted(set(wanted) - names) == [], "data files missing from the wheel"
    modules = [name for name in tracked_files("reqstudio") if name.endswith(".py")]
    assert sorted(set(modules) - names) == [], "modules missing from the wheel"

    with tarfile.open(installed.sdist) as sdist:
        in_sdist = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    assert sorted(set(wanted + modules) - in_sdist) == [], "files missing from the sdist"


def test_the_installed_package_is_the_wheel_not_the_checkout(installed: Installed):
    where = subprocess.run(
        [installed.program("python"), "-c",
         "import json, reqstudio; from importlib.metadata import distribution; "
         "print(reqstudio.__file__); "
         "print(json.loads(distribution('reqstudio').read_text('direct_url.json')))"],
        cwd=installed.elsewhere, env=installed.env, capture_output=True, text=True, check=True,
    ).stdout.splitlines()  # fmt: skip
    site = installed.venv / "lib" / "python3.11" / "site-packages"
    assert Path(where[0]) == site / "reqstudio" / "__init__.py"
    assert "dir_info" not in where[1] and installed.wheel.name in where[1]  # not editable
    version = installed.run("--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"reqstudio {VERSION}")
    # no other top-level package came with it
    installed_files = subprocess.run(
        [installed.program("python"), "-c",
         "from importlib.metadata import files; print('\\n'.join(str(f) for f in files('reqstudio')))"],
        cwd=installed.elsewhere, env=installed.env, capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    in_site = {f.split("/")[0] for f in installed_files if not f.startswith("..")}
    assert in_site == {"reqstudio", DIST_INFO}


@dataclass
class Served:
    process: subprocess.Popen
    url: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@contextmanager
def serving(installed: Installed, env: dict[str, str], log_path: Path) -> Iterator[Served]:
    """`reqstudio serve --port P` from the installed environment, until its page is served."""
    port = free_port()
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [installed.program("reqstudio"), "serve", "--port", str(port)],
            cwd=installed.elsewhere, env=env | {"PYTHONUNBUFFERED": "1"},
            stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    served = Served(process, f"http://127.0.0.1:{port}", log_path)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, f"reqstudio serve ended:\n{served.log()}"
            assert time.monotonic() < deadline, f"no page after 120 s:\n{served.log()}"
            try:
                if httpx.get(served.url, timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        yield served
    finally:
        stop_gently(process)


def test_serve_without_a_provider_answers_with_the_offline_model(
    installed: Installed, tmp_path: Path
):
    env = installed.env | {"REQSTUDIO_DATA_DIR": str(tmp_path / "data")}
    started = time.monotonic()
    with serving(installed, env, tmp_path / "serve.log") as served:
        TIMINGS["serve_offline_to_page_s"] = time.monotonic() - started
        assert "No provider configured: the offline demo model answers" in served.log()
        model = re.search(r"embedded model ready at (http://127\.0\.0\.1:\d+/v1)", served.log())
        assert model, served.log()
        answer = httpx.post(
            f"{model.group(1)}/chat/completions",
            json={"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 8},
            timeout=60,
        ).json()
        assert answer["choices"][0]["finish_reason"] in ("stop", "length")
        assert answer["choices"][0]["message"]["content"].strip()
    # Chainlit's folder came from the package, into the data folder, not the working folder
    app_root = tmp_path / "data" / "app"
    assert (app_root / ".chainlit" / "config.toml").is_file()
    assert (app_root / ".chainlit" / "translations" / "zh-CN.json").is_file()
    assert sorted(p.name for p in installed.elsewhere.iterdir()) == []


# The login form: the browser asks who is signed in (401 until someone is).
@pytest.mark.failed_requests(r"^401 GET /user$")
def test_serve_signs_in_and_has_a_chat_turn_and_an_srs_run_in_the_browser(
    installed: Installed, browser: Browser, llm_server: ScriptedLLMServer, tmp_path: Path,
    output_dir: Path,
):  # fmt: skip
    env = installed.env | web.provider_env(llm_server)
    env["REQSTUDIO_DATA_DIR"] = str(tmp_path / "data")
    added = installed.run("users", "add", "alice", env=env, input=PASSWORD + "\n")
    assert added.returncode == 0, added.stderr
    started = time.monotonic()
    with serving(installed, env, tmp_path / "serve.log") as served:
        TIMINGS["serve_to_page_s"] = time.monotonic() - started
        assert "Model provider: scripted-model" in served.log()
        page = web.open_page(browser, served.url, "zh-CN", ready=False)
        page.locator("#email").fill("alice")
        page.locator("#password").fill(PASSWORD)
        page.locator("button[type=submit]").click()
        expect(page.get_by_text("已启用 Chat 对话 模式")).to_be_visible(timeout=60_000)

        llm_server.script(Reply(content="已记录：从 wheel 安装的应用在回答。"))
        web.send(page, "这个应用是从哪里安装的？")
        expect(page.get_by_text("已记录：从 wheel 安装的应用在回答。")).to_be_visible()
        expect(
            page.locator("#thread-history").get_by_text("这个应用是从哪里安装的")
        ).to_be_visible()

        llm_server.script(
            srs.parse_reply(("FR-01", "顾客可以浏览商品目录")),
            srs.explore_reply(("FR-01", "顾客可以按类别浏览商品目录")),
            srs.clarify_reply(FR_01=2),
            srs.doc_reply("# 软件需求规格说明\n\n## 1. 引言\n\n本文档描述 e-Store 的需求。\n"),
        )
        web.wait_until_idle(page)
        web.switch_mode(page, "SRS 生成", confirm=True)
        expect(page.get_by_text("已启用 SRS 生成 模式")).to_be_visible()
        web.attach(page, str(srs.E_STORE / "reference.md"))
        web.send(page, "我们要做一个在线电子商店，顾客浏览商品目录。")
        expect(page.get_by_text("已读取参考 SRS", exact=False)).to_be_visible()
        expect(page.get_by_text("✅ 完成", exact=False)).to_be_visible(timeout=90_000)
        expect(page.get_by_text("本文档描述 e-Store 的需求。")).to_be_visible()
        expect(page.get_by_text("srs.md")).to_be_visible()
        web.wait_until_idle(page)
        page.screenshot(path=output_dir / "wheel-srs-zh-CN.png")
        assert llm_server.pending == 0
    TIMINGS["browser_test_s"] = time.monotonic() - started


def test_the_installed_cli_checks_a_document_and_generates_an_srs(
    installed: Installed, llm_server: ScriptedLLMServer, tmp_path: Path
):
    document = srs.E_STORE / "reference.md"
    checked = installed.run("check", str(document), "--json")
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    # the same report as the checkout's own code gives: the checker's data came with the wheel
    in_checkout = subprocess.run(
        [sys.executable, "-c", "from reqstudio.entry import run; run()", "check", str(document),
         "--json"],
        cwd=tmp_path, env=os.environ | {"PYTHONPATH": str(ROOT)}, capture_output=True,
        text=True, encoding="utf-8", timeout=120,
    )  # fmt: skip
    assert in_checkout.returncode == 0, in_checkout.stderr
    assert report == json.loads(in_checkout.stdout)
    assert len(report["findings"]) > 10  # the reference SRS has its share of findings

    env = installed.env | {
        "OPENAI_BASE_URL": llm_server.base_url,
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
        "OPENAI_MODEL": "scripted-model",
        "OPENAI_TIMEOUT": "10",
        "REQSTUDIO_DATA_DIR": str(tmp_path / "data"),
    }
    llm_server.script(
        srs.parse_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment.")),
        srs.explore_reply(("FR-01", "Place an order."), ("FR-02", "Track a shipment online.")),
        srs.clarify_reply(FR_01=2, FR_02=-2),
        srs.doc_reply(),
    )
    out, log = tmp_path / "srs.md", tmp_path / "log.json"
    generated = installed.run(
        "srs", "generate", "--input", str(srs.E_STORE / "input.md"),
        "--reference", str(document), "--max-iterations", "1", "--out", str(out),
        "--log", str(log), env=env,
    )  # fmt: skip
    assert generated.returncode == 0, generated.stderr
    assert srs.without_matrix(out.read_text(encoding="utf-8")) == srs.SRS_TEXT
    data = json.loads(log.read_text(encoding="utf-8"))
    assert [entry["agent"] for entry in data["logs"]] == [
        "ReqParse", "ReqExplore", "ReqClarify", "DocGenerate",
    ]  # fmt: skip
    assert data["completed"] is True and llm_server.pending == 0
