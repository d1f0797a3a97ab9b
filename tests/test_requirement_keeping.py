"""A revision keeps every requirement statement of the section it replaces,
read with the checker's parser (`reqstudio.check.keeping`): dropping one, merging them into
prose or only mentioning their ids is refused; reordering and rewording are fine, and so is a
change a finding of the round asks for. The refusal says which, in both languages."""

from __future__ import annotations

import pytest

from reqstudio.check.keeping import lost_requirements, revision_refusal

LOANS = """- FR-01: The system shall let a reader register with an e-mail address.
- FR-02: The system shall let a reader borrow up to 5 books at a time.
- FR-03: The system shall send a reminder 2 days before a loan ends.
"""
LOANS_ZH = """- FR-01：系统应当允许读者用电子邮箱注册。
- FR-02：系统应允许读者一次最多借 5 本书。
- FR-03：系统应在借期结束前 2 天发送提醒。
"""
AUTHOR = ["review/author.md", "review/author_reask.md"]


def refusal(before: str, after: str, findings=(), language: str = "en") -> str | None:
    found = revision_refusal(
        before, after, list(findings), templates=AUTHOR, section="sec-02 “2. Loans”"
    )
    return None if found is None else found.text(language)


# --- refused -------------------------------------------------------------------------------


def test_a_dropped_requirement_is_named():
    after = LOANS.replace(
        "- FR-02: The system shall let a reader borrow up to 5 books at a time.\n", ""
    )
    assert lost_requirements(LOANS, after).dropped == ("FR-02",)
    assert refusal(LOANS, after) == (
        "revision of section sec-02 “2. Loans” refused: it dropped FR-02, and no finding of "
        "this round asks to remove them"
    )
    assert refusal(LOANS, after, language="zh") == (
        "章节 sec-02 “2. Loans” 的修订被拒绝：它删去了 FR-02，而本轮没有任何评审意见要求删除它们"
    )


@pytest.mark.parametrize(
    ("before", "after"),
    [
        # the offline model's answers, the section's length kept
        (
            LOANS,
            "FR-01, FR-02, FR-03 were dropped because they repeat what the purpose section says "
            "about readers, loans and reminders, so this section now only introduces the loans.\n",
        ),
        (
            LOANS,
            "FR-01, FR-02, and FR-03 are no longer asked to remove them. The library keeps its "
            "loans simple for every reader, and the reminders are part of the service.\n",
        ),
        (
            LOANS_ZH,
            "FR-01、FR-02 和 FR-03 已被删除，因为它们与目的一节重复；本节现在只介绍借阅服务的概况。\n",
        ),
    ],
    ids=["were-dropped", "no-longer-asked", "zh-deleted"],
)
def test_ids_only_mentioned_in_a_sentence_are_not_requirements(before: str, after: str):
    lost = lost_requirements(before, after)
    assert lost.mentioned == ("FR-01", "FR-02", "FR-03") and not lost.dropped
    assert refusal(before, after).startswith(
        "revision of section sec-02 “2. Loans” refused: it dropped FR-01, FR-02, FR-03; the ids "
        "are only mentioned"
    )
    assert refusal(before, after, language="zh").startswith(
        "章节 sec-02 “2. Loans” 的修订被拒绝：它删去了 FR-01, FR-02, FR-03；这些编号只是被提及"
    )


@pytest.mark.parametrize(
    "after",
    [
        "Readers register with an e-mail address (FR-01), borrow up to 5 books at a time "
        "(FR-02) and get a reminder 2 days before a loan ends (FR-03).\n",
        "The system shall let readers register with an e-mail address (FR-01), borrow up to "
        "5 books at a time (FR-02) and get a reminder 2 days before a loan ends (FR-03).\n",
    ],
    ids=["prose", "one-shall-for-three"],
)
def test_requirements_merged_into_prose_are_refused(after: str):
    assert lost_requirements(LOANS, after).mentioned == ("FR-01", "FR-02", "FR-03")
    assert refusal(LOANS, after) is not None


def test_an_id_as_the_subject_of_an_edit_or_without_its_modal_is_no_statement():
    merged = LOANS.replace(
        "- FR-02: The system shall let a reader borrow up to 5 books at a time.",
        "- FR-02 was merged into FR-01, which covers what a reader may do.",
    )
    assert lost_requirements(LOANS, merged).mentioned == ("FR-02",)
    emptied = LOANS.replace(
        "The system shall let a reader borrow up to 5 books at a time.", "Borrowing of books."
    )
    assert lost_requirements(LOANS, emptied).mentioned == ("FR-02",)


def test_a_chinese_revision_that_drops_a_requirement_is_refused():
    after = LOANS_ZH.replace("- FR-02：系统应允许读者一次最多借 5 本书。\n", "")
    assert lost_requirements(LOANS_ZH, after).dropped == ("FR-02",)


def test_a_table_row_the_id_heads_must_still_be_there():
    before = (
        "| id | requirement |\n|---|---|\n| FR-01 | The system shall lock an account. |\n"
        "| FR-02 | Password reset by e-mail |\n"
    )
    after = "| id | requirement |\n|---|---|\n| FR-01 | The system shall lock an account. |\n"
    assert lost_requirements(before, after).dropped == ("FR-02",)
    assert not lost_requirements(before, before + "\n").ids


# --- accepted ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "after",
    [
        # reordered
        "- FR-03: The system shall send a reminder 2 days before a loan ends.\n"
        "- FR-01: The system shall let a reader register with an e-mail address.\n"
        "- FR-02: The system shall let a reader borrow up to 5 books at a time.\n",
        # reworded, each still a statement
        "- FR-01: The system shall register a reader by e-mail address within 1 minute.\n"
        "- FR-02: A reader shall be able to borrow at most 5 books at once.\n"
        "- FR-03: The system shall e-mail a reminder 48 hours before a loan ends.\n",
        # another shape: headings that carry the ids
        "#### FR-01 Registration\n\nThe system shall let a reader register by e-mail.\n\n"
        "#### FR-02 Borrowing\n\nThe system shall let a reader borrow up to 5 books.\n\n"
        "#### FR-03 Reminders\n\nThe system shall send a reminder 2 days before a loan ends.\n",
        # ids at the end of their statements
        "The system shall let a reader register with an e-mail address (FR-01).\n"
        "The system shall let a reader borrow up to 5 books at a time (FR-02).\n"
        "The system shall send a reminder 2 days before a loan ends (FR-03).\n",
    ],
    ids=["reordered", "reworded", "headings", "trailing-ids"],
)
def test_reordered_or_reworded_requirements_are_kept(after: str):
    assert refusal(LOANS, after) is None


def test_a_chinese_revision_that_reorders_and_rewords_is_kept():
    after = (
        "- FR-03：系统须在借期结束前 48 小时通过短信提醒读者。\n"
        "- FR-01：读者必须能用电子邮箱在 1 分钟内完成注册。\n"
        "- FR-02：每位读者同时最多可以借 5 本书。\n"
    )
    assert refusal(LOANS_ZH, after) is None


def test_a_change_a_finding_asks_for_is_accepted():
    """Removing, merging and renumbering are fine where a finding names the requirement and
    asks for it; the same revision without that finding is refused."""
    without_fr2 = LOANS.replace(
        "- FR-02: The system shall let a reader borrow up to 5 books at a time.\n", ""
    )
    assert refusal(LOANS, without_fr2, ["FR-02 duplicates section 3; remove FR-02 here"]) is None
    assert refusal(LOANS, without_fr2, ["FR-01 needs a time limit"]) is not None
    renumbered = "- FR-03: The checkout completes within 3 s for 95 % of orders.\n"
    before = "- FR-3: The checkout is fast and works on phones.\n"
    assert (
        refusal(before, renumbered, ["Renumber FR-3 as FR-03 as the rest of the document"]) is None
    )
    assert refusal(before, renumbered) is not None
    zh = LOANS_ZH.replace("- FR-02：系统应允许读者一次最多借 5 本书。\n", "")
    assert refusal(LOANS_ZH, zh, ["FR-02 与 FR-01 重复，请合并"]) is None


def test_a_name_with_a_number_is_no_requirement_id():
    """SHA-256 in a statement is a name, not the statement's id: changing it is a change of
    wording; the statements that end with their ids (FR-04, FR-05) are still kept."""
    before = (
        "The system shall hash passwords with SHA-256.\n"
        "The system shall send reminders by SMS (FR-04).\n"
        "The system shall lock an account after 5 failed log-ins (FR-05).\n"
    )
    assert refusal(before, before.replace("SHA-256", "bcrypt")) is None
    without = before.replace("The system shall send reminders by SMS (FR-04).\n", "")
    assert lost_requirements(before, without).dropped == ("FR-04",)
