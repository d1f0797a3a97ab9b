"""`reqstudio rewrite` and `python -m reqstudio.modes.rewrite` as a user runs them: a real process talking
HTTP to the scripted server, progress on stderr, the document on stdout or in files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_support import QUICK, REQSTUDIO, cli_env, ctrl_c, run_reqstudio
from tests.rewrite_support import (
    BODIES,
    CLARIFICATIONS,
    FILL,
    SECTIONS,
    fill_replies,
    outline_reply,
    prompts_for,
    review_reply,
    write_inputs,
)
from tests.scripted_server import Reply

ROOT = Path(__file__).resolve().parent.parent
EXPECTED_MD = "# Pet Clinic Booking System\n\n" + "".join(
    f"## {title}\n\n{body.strip()}\n\n"
    for (title, _, _), body in zip(SECTIONS, BODIES, strict=True)
)
PROGRESS = [
    "INFO: Stage start: outline_generation...",
    "INFO: Stage end: outline_generation.",
    "INFO: Stage start: content_filling...",
    "INFO: [content_filling] Writing section 1/3...",
    "INFO: [content_filling] Writing section 2/3...",
    "INFO: [content_filling] Writing section 3/3...",
    "INFO: Stage end: content_filling.",
    "INFO: Stage start: review_revision...",
    "INFO: [review_revision] Review round 1...",
    "INFO: [review_revision] Review round 1: 0 issue(s) found",
    "INFO: Stage end: review_revision.",
]
PROGRESS_ZH = [
    "INFO: 阶段开始：outline_generation...",
    "INFO: 阶段结束：outline_generation。",
    "INFO: 阶段开始：content_filling...",
    "INFO: [content_filling] 正在生成第 1/3 节...",
    "INFO: [content_filling] 正在生成第 2/3 节...",
    "INFO: [content_filling] 正在生成第 3/3 节...",
    "INFO: 阶段结束：content_filling。",
    "INFO: 阶段开始：review_revision...",
    "INFO: [review_revision] 第 1 轮评审中...",
    "INFO: [review_revision] 第 1 轮评审：发现 0 个问题",
    "INFO: 阶段结束：review_revision。",
]


@pytest.fixture
def inputs(tmp_path) -> tuple[Path, Path]:
    return write_inputs(tmp_path)


@pytest.fixture
def run(llm_server, tmp_path):
    env = cli_env(llm_server.base_url, tmp_path, **QUICK)
    for name in [k for k in env if k.startswith(("LC_", "LANG"))]:
        del env[name]

    def run_command(*args: str, module: bool = False) -> subprocess.CompletedProcess:
        command = (
            [sys.executable, "-m", "reqstudio.modes.rewrite"] if module else [*REQSTUDIO, "rewrite"]
        )
        return run_reqstudio(llm_server.base_url, tmp_path, *args, env=env, command=command)

    return run_command


@pytest.fixture
def run_in_process(llm_server, tmp_path, monkeypatch, capsys):
    """Bad inputs stop before any model is started: the command's `main`, in this process."""
    from reqstudio.cli import main

    for name in list(os.environ):
        if name.startswith(("OPENAI_", "REQSTUDIO_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_BASE_URL", llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("REQSTUDIO_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("REQSTUDIO_RETRY_BACKOFF_SCALE", "0.01")
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)

    def run_command(*args: str) -> subprocess.CompletedProcess:
        code = main(["rewrite", *[str(a) for a in args]])
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(args, code, out, err)

    return run_command


def script_rewrite(server) -> None:
    server.script(outline_reply(), *fill_replies(), review_reply())


@pytest.mark.parametrize("module", [False, True], ids=["reqstudio", "python-m"])
def test_markdown_to_stdout_without_output_flags(run, inputs, llm_server, module):
    script_rewrite(llm_server)
    done = run("--original-doc", inputs[0], "--clarifications", inputs[1], module=module)
    assert done.returncode == 0, done.stderr
    assert done.stdout == EXPECTED_MD
    lines = done.stderr.splitlines()
    assert lines[0].startswith("INFO: Sizes: background (original + clarifications) about ")
    assert lines[1].startswith("INFO: Run id: rewrite-")
    assert lines[2 : 2 + len(PROGRESS)] == PROGRESS
    assert lines[-1].startswith("INFO: Done: 3 sections, 1 review round(s), 0 issue(s) fixed")


def rewrite_quietly_to(run, inputs, llm_server, option: str, out: Path) -> Path:
    """A rewrite written to `out` by `option` alone: nothing on stdout."""
    script_rewrite(llm_server)
    done = run("--original-doc", inputs[0], "--clarifications", inputs[1], option, out)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    return out


def test_output_md_only(run, inputs, llm_server, tmp_path):
    out = rewrite_quietly_to(run, inputs, llm_server, "--output-md", tmp_path / "new.md")
    assert out.read_text(encoding="utf-8") == EXPECTED_MD
    assert not (tmp_path / "new.json").exists()


def test_output_json_only(run, inputs, llm_server, tmp_path):
    out = rewrite_quietly_to(run, inputs, llm_server, "--output-json", tmp_path / "structure.json")
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["rewritten_content"] == EXPECTED_MD
    document = data["structured_document"]
    assert document["title"] == "Pet Clinic Booking System"
    assert [(s["title"], s["goal"], s["level"], s["order"]) for s in document["sections"]] == [
        (t, g, lv, i) for i, (t, g, lv) in enumerate(SECTIONS)
    ]
    assert [s["content"] for s in document["sections"]] == BODIES


def test_both_outputs(run, inputs, llm_server, tmp_path):
    script_rewrite(llm_server)
    md, js = tmp_path / "a.md", tmp_path / "a.json"
    done = run(
        "--original-doc", inputs[0], "--clarifications", inputs[1],
        "--output-md", md, "--output-json", js, module=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert md.read_text(encoding="utf-8") == EXPECTED_MD
    assert json.loads(js.read_text(encoding="utf-8"))["rewritten_content"] == EXPECTED_MD
    assert CLARIFICATIONS[0]["answer"] in json.dumps(llm_server.requests[0])


def test_a_failed_stage_exits_1_naming_it_and_keeps_the_partial_document(
    run, inputs, llm_server, tmp_path
):
    llm_server.script(
        outline_reply(),
        Reply(content=BODIES[0], match=FILL),
        *[Reply(content="x" * 40, match=FILL, fault="cut") for _ in range(5)],
    )
    out = tmp_path / "new.md"
    done = run("--original-doc", inputs[0], "--clarifications", inputs[1], "--output-md", out)
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ERROR: stage content_filling failed (section sec-02 “Booking”):")
    assert not out.exists()
    partial = (tmp_path / "new.partial.md").read_text(encoding="utf-8")
    assert BODIES[0].strip() in partial


BAD_CLARIFICATIONS = {
    "not-json": ("[{'question': 1}", "not valid JSON (line 1, column 3"),
    "object": ('{"question": "q", "answer": "a"}', "must hold a JSON list of objects"),
    "entry-not-object": ('[{"question": "q", "answer": "a"}, "q2"]', "entry 2 must be an object"),
    "missing-answer": (
        '[{"question": "q", "answer": "a"}, {"question": "q2"}]',
        "entry 2: field 'answer' is missing",
    ),
    "missing-question": ('[{"answer": "a"}]', "entry 1: field 'question' is missing"),
    "number-answer": (
        '[{"question": "q", "answer": 3}]',
        "entry 1: field 'answer' must be a string",
    ),
    "empty-question": ('[{"question": "  ", "answer": "a"}]', "entry 1: field 'question' is empty"),
}


@pytest.mark.parametrize("case", sorted(BAD_CLARIFICATIONS))
def test_bad_clarifications_exit_2_naming_entry_and_field(
    run_in_process, inputs, llm_server, tmp_path, case
):
    text, expected = BAD_CLARIFICATIONS[case]
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    done = run_in_process("--original-doc", inputs[0], "--clarifications", bad)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr  # one line
    assert expected in done.stderr
    assert done.stderr.startswith("reqstudio: --clarifications:")
    assert llm_server.requests == []  # before any model call


def test_an_empty_clarifications_list_is_accepted(run, inputs, llm_server, tmp_path):
    script_rewrite(llm_server)
    empty = tmp_path / "none.json"
    empty.write_text("[]", encoding="utf-8")
    done = run("--original-doc", inputs[0], "--clarifications", empty)
    assert done.returncode == 0, done.stderr
    assert "(no clarifications)" in json.dumps(llm_server.requests[0], ensure_ascii=False)


@pytest.mark.parametrize(
    "flag_args, expected",
    [
        (("--original-doc", "missing.md"), "--original-doc: missing.md: the file was not found"),
        (("--clarifications", "missing.json"), "--clarifications: no such file: missing.json"),
        (("--output-md", "no/such/folder/x.md"), "--output-md: the folder no/such/folder"),
        (("--output-json", "."), "--output-json: . is a folder, not a file"),
        (("--output-md", "/proc/rewrite.md"), "--output-md: /proc/rewrite.md cannot be written"),
    ],
    ids=["missing-doc", "missing-clarifications", "no-folder", "folder", "unwritable"],
)
def test_bad_paths_exit_2_with_one_line(run_in_process, inputs, llm_server, flag_args, expected):
    args = {"--original-doc": inputs[0], "--clarifications": inputs[1]}
    args[flag_args[0]] = flag_args[1]
    done = run_in_process(*[part for pair in args.items() for part in pair])
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert expected in done.stderr
    assert llm_server.requests == []


def test_unsupported_original_is_refused(run_in_process, inputs, llm_server, tmp_path):
    sheet = tmp_path / "original.xlsx"
    sheet.write_bytes(b"PK\x03\x04")
    done = run_in_process("--original-doc", sheet, "--clarifications", inputs[1])
    assert done.returncode == 2
    assert "--original-doc: original.xlsx: the file type .xlsx is not supported" in done.stderr
    assert llm_server.requests == []


def test_required_flags(run_in_process, inputs):
    with pytest.raises(SystemExit) as exit_:
        run_in_process("--clarifications", inputs[1])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit) as exit_:
        run_in_process("--original-doc", inputs[0])
    assert exit_.value.code == 2


def test_required_flag_message(run, inputs):
    done = run("--clarifications", inputs[1])
    assert done.returncode == 2
    assert "the following arguments are required: --original-doc" in done.stderr
    done = run("--original-doc", inputs[0])
    assert done.returncode == 2
    assert "the following arguments are required: --clarifications" in done.stderr


# --- endings, writes, language, sizes, resume -------------------------------------

SHARPER = "The system lets owners book visits; vets see their schedule; nothing else.\n"


def script_failed_patch(server) -> None:
    """sec-01's patch works; sec-03's is stopped by the content filter on every try."""
    server.script(
        outline_reply(),
        *fill_replies(),
        review_reply(("sec-01", "Too vague."), ("sec-03", "SMS provider unnamed.")),
        Reply(content=SHARPER, match="[sec-01] Overview (heading"),
        *[
            Reply(
                content="Owners pay by",
                match="[sec-03] Payment and reminders (heading",
                finish_reason="content_filter",
            )
            for _ in range(5)
        ],
    )


def test_a_failed_patch_exits_3_and_writes_the_incomplete_document_beside_the_output(
    run, inputs, llm_server, tmp_path
):
    script_failed_patch(llm_server)
    md, js = tmp_path / "new.md", tmp_path / "new.json"
    done = run(
        "--original-doc", inputs[0], "--clarifications", inputs[1],
        "--output-md", md, "--output-json", js,
    )  # fmt: skip
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    assert not md.exists()  # --output-md only ever holds a complete document
    partial = (tmp_path / "new.partial.md").read_text(encoding="utf-8")
    assert SHARPER.strip() in partial  # the patch that worked is kept
    assert BODIES[2].strip() in partial  # the failed one stays as drafted
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["complete"] is False
    assert [f["section_id"] for f in data["failed_patches"]] == ["sec-03"]
    assert data["failed_patches"][0]["finish_reason"] == "content_filter"
    lines = done.stderr.strip().splitlines()
    assert lines[-2].startswith(
        "WARNING: section sec-03 “Payment and reminders” was not patched and stays as drafted: "
    )
    assert "finish reason: content_filter" in lines[-2]
    assert lines[-1] == (
        f"ERROR: incomplete result: 1 of 2 patch(es) failed; the document is in "
        f"{tmp_path / 'new.partial.md'}"
    )


def test_an_incomplete_result_never_goes_to_stdout(run, inputs, llm_server, tmp_path):
    script_failed_patch(llm_server)
    done = run("--original-doc", inputs[0], "--clarifications", inputs[1])
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    written = Path(done.stderr.strip().splitlines()[-1].rsplit(" ", 1)[1])
    assert written.parent == tmp_path and written.name.endswith(".partial.md")
    assert SHARPER.strip() in written.read_text(encoding="utf-8")


def test_both_outputs_on_one_path_are_refused(run_in_process, inputs, llm_server, tmp_path):
    same = tmp_path / "out.md"
    done = run_in_process(
        "--original-doc", inputs[0], "--clarifications", inputs[1],
        "--output-md", same, "--output-json", tmp_path / "." / "out.md",
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "--output-md and --output-json name the same file" in done.stderr
    assert llm_server.requests == []


def test_a_full_disk_after_the_run_writes_to_the_working_directory(
    run_in_process, inputs, llm_server, tmp_path, monkeypatch
):
    import reqstudio.cli as cli

    script_rewrite(llm_server)
    folder = tmp_path / "out"
    folder.mkdir()
    target = folder / "new.md"
    real_write = cli.write_text

    def disk_full(path, text):
        if path == target:
            raise OSError(28, "No space left on device")
        real_write(path, text)

    monkeypatch.setattr(cli, "write_text", disk_full)
    done = run_in_process(
        "--original-doc", inputs[0], "--clarifications", inputs[1], "--output-md", target
    )
    assert done.returncode == 1
    assert (tmp_path / "new.md").read_text(encoding="utf-8") == EXPECTED_MD
    assert (
        f"WARNING: could not write {target} (No space left on device); written to "
        f"{tmp_path / 'new.md'} instead"
    ) in done.stderr
    assert "Traceback" not in done.stderr


def test_an_output_folder_removed_during_the_run_falls_back(
    run_in_process, inputs, llm_server, tmp_path, monkeypatch
):
    import shutil

    from reqstudio.modes.rewrite.callbacks import RewriteWords

    script_rewrite(llm_server)
    folder = tmp_path / "out"
    folder.mkdir()
    real_lines = RewriteWords.lines

    def remove_folder_at_review(self, event):
        if event.type == "step_started" and event.step == "review_revision":
            shutil.rmtree(folder)  # someone cleans up while the rewrite runs
        return real_lines(self, event)

    monkeypatch.setattr(RewriteWords, "lines", remove_folder_at_review)
    done = run_in_process(
        "--original-doc", inputs[0], "--clarifications", inputs[1],
        "--output-json", folder / "a.json",
    )  # fmt: skip
    assert done.returncode == 1
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert data["complete"] is True and data["rewritten_content"] == EXPECTED_MD
    assert f"written to {tmp_path / 'a.json'} instead" in done.stderr
    assert "Traceback" not in done.stderr


def test_progress_lines_in_chinese_with_lang_zh(run, inputs, llm_server):
    script_rewrite(llm_server)
    done = run("--original-doc", inputs[0], "--clarifications", inputs[1], "--lang", "zh")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("INFO: 规模：背景（原始文档 + 澄清）约 ")
    assert lines[1].startswith("INFO: 运行编号：rewrite-")
    assert lines[2 : 2 + len(PROGRESS_ZH)] == PROGRESS_ZH
    assert lines[-1].startswith("INFO: 完成：3 节，评审 1 轮")


def test_an_original_too_large_for_the_context_is_refused_before_any_call(
    run_in_process, inputs, llm_server, tmp_path, monkeypatch
):
    monkeypatch.setenv("OPENAI_CONTEXT_TOKENS", "1000")
    big = tmp_path / "big.md"
    big.write_text("# Big\n\n" + "Owners book visits online. " * 400, encoding="utf-8")
    done = run_in_process("--original-doc", big, "--clarifications", inputs[1])
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1, done.stderr
    assert "--original-doc: too large for the model: background" in done.stderr
    assert "the model's context 1000 tokens" in done.stderr
    assert llm_server.requests == []


def test_a_failed_run_resumes_from_the_section_that_failed(run, inputs, llm_server, tmp_path):
    llm_server.script(
        outline_reply(),
        Reply(content=BODIES[0], match=FILL),
        *[Reply(content="x" * 40, match=FILL, fault="cut") for _ in range(5)],
    )
    failed = run("--original-doc", inputs[0], "--clarifications", inputs[1])
    assert failed.returncode == 1
    hint = failed.stderr.strip().splitlines()[-2]
    assert hint.startswith(
        "INFO: To continue from the last saved step: reqstudio rewrite --resume "
    )
    run_id = hint.rsplit(" ", 1)[1]
    assert f"INFO: Run id: {run_id}" in failed.stderr

    llm_server.reset()
    llm_server.script(*fill_replies(BODIES[1:]), review_reply())
    resumed = run("--resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == EXPECTED_MD
    fills = prompts_for(llm_server, FILL)
    assert len(fills) == 2  # sections 2 and 3 only: section 1 and the outline were saved
    assert BODIES[0].strip() in fills[0]  # section 2 still sees section 1
    assert "INFO: Stage start: content_filling..." in resumed.stderr
    assert "INFO: Resuming run " + run_id in resumed.stderr

    again = run("--resume", run_id)  # a finished run's checkpoints are gone
    assert again.returncode == 2
    assert f"--resume: no unfinished rewrite run is saved as '{run_id}'" in again.stderr


def test_resume_takes_no_new_inputs(run_in_process, inputs, llm_server):
    done = run_in_process("--resume", "rewrite-abc", "--original-doc", inputs[0])
    assert done.returncode == 2
    assert "--resume continues the saved run" in done.stderr


def test_a_failed_stage_is_named_in_chinese_with_lang_zh(run, inputs, llm_server):
    llm_server.script(
        outline_reply(),
        Reply(content=BODIES[0], match=FILL),
        *[
            Reply(content="Owners pick", match=FILL, finish_reason="content_filter")
            for _ in range(5)
        ],
    )
    done = run("--original-doc", inputs[0], "--clarifications", inputs[1], "--lang", "zh")
    assert done.returncode == 1
    assert (
        "ERROR: 阶段失败：content_filling（章节 sec-02）：模型服务的内容过滤中断了回答"
        "（`finish reason: content_filter`），重试 5 次后仍然如此"
    ) in done.stderr.splitlines()
    last = done.stderr.strip().splitlines()[-1]  # the final line stays the same for scripts
    assert last.startswith("ERROR: stage content_filling failed (section sec-02 “Booking”): ")
    assert "(`finish reason: content_filter`)" in last


ALWAYS = {  # the fault, and what the last line must say about it
    "cut": (dict(content="# Title\n\nSome text that goes on", fault="cut"), "stream cut off"),
    "length": (dict(content="# Title\n\nSome text", finish_reason="length"), "length limit"),
    "content_filter": (
        dict(content="# Title\n\nSome", finish_reason="content_filter"),
        "(`finish reason: content_filter`), also after 3 tries",
    ),
    "500": (dict(fault="500"), "server error (500)"),
    "empty": (dict(content=""), "answer was empty (no text), also after 3 tries"),
    "bad-json": (dict(content="Here is the outline: Overview."), "not valid JSON after 3"),
}


@pytest.mark.parametrize("fault", sorted(ALWAYS))
def test_a_provider_whose_every_answer_has_the_same_fault_never_exits_0(
    run, inputs, llm_server, tmp_path, fault
):
    reply, said = ALWAYS[fault]
    llm_server.script(*[Reply(**reply) for _ in range(20)])
    out = tmp_path / "new.md"
    done = run("--original-doc", inputs[0], "--clarifications", inputs[1], "--output-md", out)
    assert done.returncode == 1, done.stderr
    assert done.stdout == "" and not out.exists()
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("ERROR: stage outline_generation failed: "), last
    assert said in last
    assert "Traceback" not in done.stderr


def test_ctrl_c_ends_the_open_stage_and_the_run_resumes(llm_server, inputs, tmp_path, run):
    llm_server.script(
        outline_reply(),
        Reply(content=BODIES[0], match=FILL),
        Reply(content=BODIES[1], match=FILL, delay=30),  # the model is slow: the user gives up
    )
    env = cli_env(llm_server.base_url, tmp_path, REQSTUDIO_RETRY_BACKOFF_SCALE="0.01", LANG="C")
    process = subprocess.Popen(
        [*REQSTUDIO, "rewrite", "--original-doc", str(inputs[0]),
         "--clarifications", str(inputs[1])],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        encoding="utf-8",
    )  # fmt: skip
    seen = []
    for line in process.stderr:  # blocks until the run reaches section 2
        seen.append(line.rstrip("\n"))
        if "Writing section 2/3" in line:
            break
    ctrl_c(process)
    out, err = process.communicate(timeout=60)
    stderr = "\n".join(seen) + "\n" + err
    assert process.returncode == 130, stderr
    assert out == ""
    assert "ERROR: Stage failed: content_filling: cancelled" in stderr
    run_id = next(s for s in seen if s.startswith("INFO: Run id: ")).split()[3]
    assert f"reqstudio rewrite --resume {run_id}" in stderr

    llm_server.reset()
    llm_server.script(*fill_replies(BODIES[1:]), review_reply())
    resumed = run("--resume", run_id)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout == EXPECTED_MD
    assert len(prompts_for(llm_server, FILL)) == 2


BARE_HINT = {  # the command alone, for a run that can continue as it is
    "en": "INFO: To continue from the last saved step: reqstudio rewrite --resume ",
    "zh": "INFO: 从最后保存的步骤继续：reqstudio rewrite --resume ",
}


@pytest.mark.parametrize(
    ("fault", "lang", "advice"),
    [
        # an answer that is no JSON, every time: the same model would fail the same way
        (dict(content="Here is the outline: Overview."), "en", "set OPENAI_MODEL to another"),
        (dict(content="Here is the outline: Overview."), "zh", "OPENAI_MODEL 设为另一个模型"),
        # the provider was away: resuming as it is can succeed
        (dict(fault="500"), "en", None),
    ],
    ids=["unreadable-en", "unreadable-zh", "outage"],
)
def test_the_resume_hint_is_printed_only_when_resuming_can_go_otherwise(
    run, inputs, llm_server, fault, lang, advice
):
    llm_server.script(*[Reply(**fault) for _ in range(20)])
    done = run("--original-doc", inputs[0], "--clarifications", inputs[1], "--lang", lang)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    bare = [line for line in lines if line.startswith(BARE_HINT[lang])]
    if advice is None:
        assert len(bare) == 1, lines
        return
    assert bare == [], lines  # resuming as it is would only fail again
    said = [line for line in lines if advice in line]
    assert len(said) == 1 and "reqstudio rewrite --resume rewrite-" in said[0], lines
