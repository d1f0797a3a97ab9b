"""The browser's verdicts on check findings, stored per user and thread in the app's database
(SQLite and PostgreSQL, through the history data layer), and the check in that thread
without what its user dismissed there."""

from __future__ import annotations

from pathlib import Path

from chainlit.context import init_http_context

from reqstudio.check.verdicts import Verdict
from reqstudio.schema import create_schema
from reqstudio.web.history import HistoryDataLayer
from reqstudio.web.requirements_check import check_tables
from reqstudio.web.verdict_store import save_verdict, thread_verdicts

DOCUMENT = """# Requirements

- FR-1: The system shall respond quickly to a search request.
- FR-2: The system shall respond quickly to a login request.
- FR-3: The operator shall move the arm quickly enough.
"""
CONTEXT = "FR-1: The system shall respond quickly to a search request."
WRONG = Verdict("ISO29148-ambiguous", "quickly", "wrong", context=CONTEXT, reason="glossary")


async def _round_trip(url: str) -> None:
    await create_schema(url)
    init_http_context()
    layer = HistoryDataLayer(url)

    async def sql(query: str, **parameters):
        return await layer.execute_sql(query=query, parameters=parameters)

    try:
        assert await save_verdict(sql, "alice", "thread-1", WRONG)
        stored = await thread_verdicts(sql, "alice", "thread-1")
        assert [(v.rule, v.term, v.verdict, v.reason) for v in stored] == [
            ("ISO29148-ambiguous", "quickly", "wrong", "glossary")
        ]
        # per user and per thread
        assert await thread_verdicts(sql, "bob", "thread-1") == []
        assert await thread_verdicts(sql, "alice", "thread-2") == []

        # the check in alice's thread no longer reports it; bob's still does
        mine = check_tables(DOCUMENT, "en", verdicts=stored)
        assert mine.suppressed == 2  # "respond quickly to" in FR-1 and FR-2
        assert ("FR-1", "ISO29148-ambiguous") not in {
            (f.requirement_id, f.rule) for f in mine.findings
        }
        assert "#### Suppressed by verdicts" in mine.tables and "2 suppressed" in mine.tables
        theirs = check_tables(
            DOCUMENT, "en", verdicts=await thread_verdicts(sql, "bob", "thread-1")
        )
        assert theirs.suppressed == 0
        assert ("FR-1", "ISO29148-ambiguous") in {
            (f.requirement_id, f.rule) for f in theirs.findings
        }

        # changing one's mind replaces the verdict (one row), and a confirmed finding stays
        right = Verdict("ISO29148-ambiguous", "quickly", "right", context=CONTEXT)
        assert await save_verdict(sql, "alice", "thread-1", right)
        again = await thread_verdicts(sql, "alice", "thread-1")
        assert [v.verdict for v in again] == ["right"]
        assert check_tables(DOCUMENT, "zh", verdicts=again).suppressed == 0
    finally:
        await layer.engine.dispose()


async def test_verdicts_round_trip_on_sqlite(tmp_path: Path):
    await _round_trip(f"sqlite+aiosqlite:///{tmp_path / 'history.db'}")


async def test_verdicts_round_trip_on_postgres(postgres_url: str):
    await _round_trip(postgres_url)


def test_the_check_step_names_requirements_and_findings_for_the_buttons():
    check = check_tables(DOCUMENT, "zh")
    assert check.fixable == ["FR-1", "FR-2", "FR-3"]
    first = check.findings[0]
    assert (first.requirement_id, first.term, first.context) == ("FR-1", "quickly", CONTEXT)
    assert "含糊用语" in first.message  # in the user's language
    assert check.suppressed == 0 and "按判定隐藏" not in check.tables


def test_a_long_term_is_cut_inside_its_quotes_at_a_word():
    # the offline walk read "L3 · ISO29148-incomplete-reference “meet the following requi":
    # the label cut at 60 characters left a word and the quote open
    from reqstudio.web.check_findings import LABEL_CHARS, FindingRef, _label

    def ref(term: str, rule: str = "ISO29148-incomplete-reference") -> FindingRef:
        return FindingRef("L3", 3, rule, term, "", "")

    long = _label(ref("meet the following requirements of the library staff"))
    assert long == "L3 · ISO29148-incomplete-reference “meet the following…”"
    assert len(long) <= LABEL_CHARS
    assert _label(ref("fast", "INCOSE-R7")) == "L3 · INCOSE-R7 “fast”"  # short: as it was
    chinese = _label(
        ref("系统应当在高峰时段保持足够快的响应速度并且不出现明显的卡顿现象以及错误提示")
    )
    assert chinese.endswith("…”") and len(chinese) <= LABEL_CHARS
    assert _label(ref("")) == "L3 · ISO29148-incomplete-reference"
