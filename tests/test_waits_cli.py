"""Every command says each retry of a model call on stderr, in the user's language (the
locale's, or --lang where the command has it): `chat`, `agent`, `srs generate`, `review`,
`rewrite` and `team` against a provider that answers HTTP 500, in real processes."""

from __future__ import annotations

import pytest

from tests.cli_support import QUICK, run_reqstudio
from tests.scripted_server import Reply
from tests.test_fault_matrix import MODES, command

RETRY = {
    "zh": "第 2/2 次尝试：上一次服务返回 HTTP 500（",
    "en": "try 2 of 2 after HTTP 500 from the provider (in ",
}
LOCALE = {"zh": "zh_CN.UTF-8", "en": "en_US.UTF-8"}


@pytest.mark.parametrize("language", ["zh", "en"])
@pytest.mark.parametrize("mode", MODES)
def test_each_retry_is_a_line_on_stderr_in_the_users_language(llm_server, tmp_path, mode, language):
    llm_server.script(*[Reply(fault="500")] * 40)
    args = command(mode, tmp_path)
    if mode == "agent":  # its notices are English unless --lang says otherwise
        args += ["--lang", language]
    done = run_reqstudio(
        llm_server.base_url, tmp_path, *args, **QUICK, OPENAI_MAX_RETRIES="1",
        LC_ALL=LOCALE[language],
    )  # fmt: skip
    assert done.returncode == 1, done.stderr[-2000:]
    lines = [line for line in done.stderr.splitlines() if RETRY[language] in line]
    assert lines, done.stderr[-2000:]
    assert all(line.startswith(("reqstudio: ", "reqstudio：")) for line in lines)
