"""What the browser's acceptance-test view writes (reqstudio/web/acceptance_view.py), outside a
browser (the page's language is then en-US): the matrix both ways with the requirements
without tests named and a test whose requirement is gone, the suspect tests with why, and the
project's texts as written (a `|` or `*` of a requirement does not break the tables). The
browser walk is tests/browser/test_acceptance_browser.py, in zh-CN and en-US."""

from __future__ import annotations

from reqstudio.web.acceptance_view import matrix_markdown, scenarios_markdown, suspects_markdown
from reqstudio.workspace.acceptance import AcceptanceTest, Suspicion
from reqstudio.workspace.acceptance_out import build_matrix
from reqstudio.workspace.items import Item
from tests.page_reading import internals

ITEMS = [
    Item(
        "REQ-1", "u1", "The system shall answer | within 2 s *always*.", ["Doc", "A"], "functional"
    ),
    Item("REQ-2", "u2", "The system shall log every answer.", ["Doc", "A"], "functional"),
    Item("SEC-1", "u3", "A", ["Doc"], "heading"),
]


def a_test(test_id: str, requirement: str, uid: str, suspect: Suspicion | None = None):
    return AcceptanceTest(test_id, test_id.lower(), requirement, uid, f"Title of {test_id}",
                          "a request\nand a user", "it is sent", "the answer comes",
                          ["Doc", "A"], "old text", suspect)  # fmt: skip


def test_the_matrix_both_ways_names_what_has_no_test_and_what_is_gone():
    changed = Suspicion("v2", "meaning", "The system shall answer within 1 s.", ITEMS[0].text)
    tests = [a_test("AT-REQ-1-1", "REQ-1", "u1", changed), a_test("AT-REQ-9-1", "REQ-9", "u9")]
    shown = matrix_markdown(build_matrix(ITEMS, tests), "Default project")
    lines = shown.splitlines()
    assert lines[0] == '**Acceptance tests of the project "Default project"**'
    assert "2 requirements: 1 with tests, 1 without; 2 tests, 1 suspect." in shown
    assert "1 test(s) verify a requirement the project no longer holds." in shown
    assert "Requirements without tests: REQ-2." in shown
    assert (
        "| REQ-1 | The system shall answer \\| within 2 s \\*always\\*. | AT-REQ-1-1 (⚠️ suspect) |"
        in lines
    )
    assert "| REQ-2 | The system shall log every answer. | none yet |" in lines
    assert "| AT-REQ-9-1 | Title of AT-REQ-9-1 | REQ-9 (removed) | holds |" in lines
    assert internals(shown.replace("\\", "")) == []

    why = suspects_markdown([tests[0]])
    assert (
        '**AT-REQ-1-1** (Title of AT-REQ-1-1) verifies REQ-1: its meaning changed in the baseline "v2".'
        in why
    )
    assert "- Was: The system shall answer within 1 s." in why
    assert "- Now: The system shall answer \\| within 2 s \\*always\\*." in why
    steps = scenarios_markdown([tests[0]]).splitlines()
    assert steps == ["**AT-REQ-1-1** · Title of AT-REQ-1-1", "- Given a request", "- Given and a user",
                     "- When it is sent", "- Then the answer comes"]  # fmt: skip


def test_a_long_matrix_shows_its_first_rows_and_says_how_many_more():
    items = [Item(f"REQ-{n}", f"u{n}", "The system shall log.", ["Doc"], "functional")
             for n in range(1, 206)]  # fmt: skip
    shown = matrix_markdown(build_matrix(items, []), "p")
    assert "| REQ-200 |" in shown and "| REQ-201 |" not in shown
    assert "… and 5 more rows (the whole matrix: `reqstudio tests matrix`)." in shown
