"""The app's own instructions are recognised when a model gives them back as its answer."""

from __future__ import annotations

import pytest

from reqstudio.modes.agent.checks import could_become_instructions, echoes_instructions
from reqstudio.modes.srs.documents import display_name


@pytest.mark.parametrize(
    "answer",
    [
        "No research results: no tool was needed. Answer from what you know, without citation "
        "numbers.\nResearch notes: the user asks about IEEE 830.",
        "Write the final answer now.",
        "You are ReqStudio's research agent. You work in a loop: think, call tools.",
        "  no RESEARCH results:   the tools found nothing usable.",
    ],
)
def test_instructions_given_back_are_recognised(answer: str):
    assert echoes_instructions(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "IEEE 830 organises an SRS into an introduction, an overall description and specific "
        "requirements [1].",
        "现在的 UTC 时间是 12:00 [1]。",
        "A good requirement is testable, unambiguous and traceable; write the final answer of "
        "each review in the log.",
        "",
    ],
)
def test_real_answers_are_not_taken_for_instructions(answer: str):
    assert not echoes_instructions(answer)


def test_the_start_of_an_instruction_is_held_back_until_it_is_clearly_an_answer():
    assert could_become_instructions("No research")
    assert not could_become_instructions("IEEE 830 is")


@pytest.mark.parametrize(
    ("name", "shown"),
    [("../../evil.md", "evil.md"), ("C:\\Users\\x\\srs.pdf", "srs.pdf"), ("srs.md", "srs.md"),
     ("..", "file")],
)  # fmt: skip
def test_only_a_files_base_name_is_shown(name: str, shown: str):
    assert display_name(name) == shown
