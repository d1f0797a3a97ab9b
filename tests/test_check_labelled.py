"""The checker judged by labels people outside the project wrote (tests/data/labelled/: the ARTA
smell sets DS2 and DS4, the ReqEval anaphora training split): the one table from label to
rules, the seeded dev / check split, the benchmark on a slice, the rules by their definitions
(vague pronouns by candidate referents, indefinite pronouns, degrees by form, negatives), the
Chinese set labelled here, and speed on large documents (a bound, not a benchmark)."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from benchmarks.human_labels import (
    ARTA_SETS,
    LABELS,
    SEVEN,
    load_arta,
    load_reqeval,
    make_split,
    read_split,
)
from reqstudio.check.engine import check_document
from reqstudio.check.pronouns import pronoun_hits
from reqstudio.check.rules import catalog, degree_forms, label_rules, parse_catalog

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "tests" / "data" / "labelled"


def findings(text: str, rule: str) -> list[str]:
    report = check_document(f"- FR-01: {text}\n")
    return [f.term for f in report.findings if rule in (f.rule, *f.also)]


# --- the data and the table from label to rules ------------------------------------------


def test_the_sets_carry_their_licences_and_a_note_on_who_labelled_them():
    readme = (LABELLED / "README.md").read_text(encoding="utf-8")
    assert (LABELLED / "arta-smells" / "LICENSE-MIT").is_file()
    assert (LABELLED / "reqeval-training" / "LICENSE-CC-BY-4.0").is_file()
    for words in ("ARTA", "ReqEval", "MIT", "CC BY 4.0", "outside this project"):
        assert words in readme, words


def test_every_label_has_a_rule_and_every_mapped_rule_exists():
    table = label_rules()
    data_labels = {label for name in ARTA_SETS for item in load_arta(name) for label in item.labels}
    assert data_labels == set(LABELS) == set(table)
    assert set(SEVEN) < set(LABELS)
    for label, rules in table.items():
        assert rules, label
        for rule in rules:
            assert rule in catalog(), (label, rule)
            # a rule answering a smell says what a person would flag, not a word list alone
            assert len(catalog()[rule].definition.split()) >= 12, rule


def test_renaming_a_rule_keeps_its_labels():
    text = (ROOT / "reqstudio" / "check" / "data" / "rules.toml").read_text(encoding="utf-8")
    renamed = parse_catalog(text.replace("[ISO29148-subjective]", "[ISO29148-subjective-language]"))
    assert label_rules(renamed)["subjective"] == ("ISO29148-subjective-language",)
    assert label_rules()["subjective"] == ("ISO29148-subjective",)


def test_the_split_is_the_seeded_one_written_in_the_repository():
    split = read_split()
    assert split == make_split()
    for name in (*ARTA_SETS, "reqeval-training"):
        dev, check = set(split[name]["dev"]), set(split[name]["check"])
        assert dev and check and not dev & check
    # a text in both sets falls in the same half of each
    halves = {}
    for name in ARTA_SETS:
        half_of = {i: h for h in ("dev", "check") for i in split[name][h]}
        for item in load_arta(name):
            key = " ".join(item.text.lower().split())
            assert halves.setdefault(key, half_of[item.id]) == half_of[item.id]
    assert len(load_reqeval()) == 139


# --- the benchmark ---------------------------------------------------------------------


def test_the_benchmark_reads_reqstudio_check_json_through_the_table():
    """A slice of DS4's dev half through `reqstudio check --json` (a real process)."""
    from benchmarks.check_human_labels import run_arta

    score = run_arta("arta-ds4", "dev", limit=25)
    assert score.requirements == 25 and score.not_found == []
    for label in LABELS:
        counts = score.by_label[label]
        assert counts["tp"] + counts["fp"] + counts["fn"] <= 25
    # the people's negatives are found: DS4's dev slice has them, all but the odd one
    assert score.by_label["negative"]["tp"] >= 3
    assert score.by_label["negative"]["fn"] <= 1
    assert ("vague_pronoun", "ISO29148-indefinite-pronoun") in score.by_rule


def test_the_benchmark_lists_errors_on_the_dev_half_only(capsys):
    from benchmarks.check_human_labels import main

    with pytest.raises(SystemExit):
        main(["--half", "check", "--errors"])
    assert "dev errors only" in capsys.readouterr().err


def test_a_report_keeps_the_previous_reports_tables_as_before():
    from benchmarks.check_human_labels import with_before

    previous = "| old summary |\n\nBefore Y, the same run gave:\n\n| older |\n\n### set, dev\nold"
    new = "| new summary |\n\n### set, dev\nnew"
    kept = with_before(new, previous, "Before X changed")
    assert kept == (
        "| new summary |\n\nBefore X changed, the same run gave:\n\n| old summary |\n\n"
        "Before Y, the same run gave:\n\n| older |\n\n### set, dev\nnew"
    )
    assert with_before(new, "", "Before X") == new


def test_the_pronoun_figures_on_the_reqeval_halves_hold():
    """The vague-pronoun rule on ambiguous (NOCUOUS) pronouns: the issue's goal is precision
    0.70 at recall 0.85; the README reports each half."""
    from benchmarks.check_human_labels import pronoun_table
    from benchmarks.human_labels import prf

    for half in ("dev", "check"):
        precision, recall, _ = prf(pronoun_table(half)[1])
        assert precision >= 0.70 and recall >= 0.85, (half, precision, recall)


# --- vague pronouns by their definition --------------------------------------------------


def pronouns(text: str) -> list[str]:
    return [h.term for h in pronoun_hits(text, "en") if h.rule == "ISO29148-vague-pronoun"]


def test_a_pronoun_with_one_candidate_of_its_number_is_clear():
    assert pronouns("The CS shall be able to adjust its retrieval schedules.") == []
    assert pronouns("The devices can be operated from their cabinets.") == []
    assert pronouns("Messages are addressed with an identifier that routes them.") == []
    assert pronouns("The shunting leader can choose the moment when he takes the call.") == []


def test_a_pronoun_with_several_candidates_of_its_number_is_vague():
    assert pronouns("The FTSS shall make the error type and its context data available.") == ["its"]
    # "they" may stand for a person: the user or the log entries
    assert pronouns("The user should not update log entries other than for their own login.") == [
        "their"
    ]
    # the main clause's subject is a candidate in the clause after it too
    assert pronouns("The network shall end the call if it receives the sequence.") == ["it"]


def test_a_pronoun_with_no_candidate_is_vague():
    assert pronouns("The QEDS shall log their activities.") == ["their"]
    assert pronouns("It may also receive a report request from Access.") == ["It"]
    assert pronouns("The 300ms represents our current estimate.") == ["our"]


def test_the_sentence_before_counts_and_the_one_before_it_does_not():
    assert pronouns("The display shows the map. It shall refresh every second.") == ["It"]
    assert pronouns("The printer shall print. The scanner shall scan. It shall beep.") == []


def test_only_nouns_are_candidates_by_their_word_class():
    """A candidate referent is the head of a noun phrase: a person before a determiner is the
    first object, a word alone after "be" an adjective, a word in -ing with its object a verb,
    an adverb or a complex preposition's first word no head, an inline id no word at all."""
    # each sentence has one noun of the pronoun's number: the pronoun is clear
    for text in [
        "The system shall provide the authenticated user the ability to change his password.",
        "The upgrade is optional, so it shall be offered.",
        "The log is kept for tracing the faults and its size shall be fixed.",
        "The sites below shall keep their own records.",
        "The unit shall [SRS101] restart after it fails.",
    ]:
        assert pronouns(text) == [], text
    # with two nouns of its number it stays vague
    assert pronouns("The unit shall [SRS101] restart the modem after it fails.") == ["it"]
    assert pronouns("It shall (3.3.5.22) be possible to reset the unit.") == ["It"]
    # an anticipatory "it" before seem, prove or become too
    hits = pronoun_hits("It may prove useful to log the faults of the pump.", "en")
    assert [h.why for h in hits] == ["a dummy subject: name who or what"]


# --- the other smells by their definitions ---------------------------------------------


def test_indefinite_pronouns_and_quantifiers():
    rule = "ISO29148-indefinite-pronoun"
    assert findings("The system shall store the list of all users.", rule) == ["all"]
    assert findings("Every user shall belong to at least one of the roles.", rule) == [
        "Every",
        "at least",
        "one",
    ]
    assert findings("The nodes shall acknowledge each other.", rule) == []


def test_degrees_are_found_by_their_form():
    assert degree_forms("big", "comparative") == ["bigger"]
    assert degree_forms("easy", "superlative") == ["easiest"]
    assert degree_forms("late", "comparative") == ["later"]
    assert degree_forms("good", "superlative") == ["best"]
    superlative, comparative = "ISO29148-superlative", "ISO29148-comparative"
    assert findings("The route shall be the shortest one.", superlative) == ["shortest"]
    # a bound in superlative or comparative form is flagged, as people flag it
    assert findings("The system shall store at least 200 users.", superlative) == ["least"]
    assert findings("The log shall hold more than 5 entries.", comparative) == ["more", "than"]
    assert findings("The new release shall load bigger maps.", comparative) == ["bigger"]
    # words that only look like one are not ("user", "order", "rather than")
    assert findings("The user shall order the parts rather than the tools.", comparative) == []
    assert findings("The speed shall be lower than or equal to 5 km/h.", comparative) == []


def test_every_negative_word_but_a_bound():
    negative = "ISO29148-negative"
    assert findings("The reply shall be sent without delay.", negative) == ["without"]
    assert findings("If the task did not complete, it shall restart.", negative) == ["not"]
    assert findings("The reply shall take no longer than 2 s.", negative) == []


def test_subjective_ambiguous_and_non_verifiable_words_by_class():
    assert findings("The system shall give fast access to the catalogue.", "ISO29148-subjective")
    assert findings("The unit shall use other approved buses.", "ISO29148-ambiguous") == ["other"]
    assert findings("The TCS shall have sufficient throughput.", "ISO29148-open-ended") == [
        "sufficient"
    ]
    # "such" of "such as" and "other" of "other than" pick out no set
    assert findings("The tool shall read formats such as CSV.", "ISO29148-ambiguous") == []
    assert findings("No unit other than the master shall send.", "ISO29148-ambiguous") == []


def test_subjective_is_an_adjective_that_judges_manner_adverbs_and_norm_words_are_ambiguous():
    subjective, ambiguous = "ISO29148-subjective", "ISO29148-ambiguous"
    assert findings("The menu shall be simple and easy to learn.", subjective) == ["simple", "easy"]
    # how quickly or easily is left open: ISO's ambiguous adverbs, not a judgement of taste
    for text, word in [
        ("The system shall respond quickly to a search request.", "quickly"),
        ("The operator shall easily replace the filter.", "easily"),
        ("The pump shall stop after a normal startup.", "normal"),
    ]:
        assert findings(text, subjective) == [], word
        assert word in findings(text, ambiguous), word
    # a quality named to be measured, and a technical sense, are not subjective
    assert findings("The efficiency of the pump shall be logged.", subjective) == []
    assert findings("Failover shall be transparent to the client.", subjective) == []


# --- Chinese -----------------------------------------------------------------------------


def test_the_chinese_set_labelled_here_is_read_and_scored():
    from benchmarks.check_zh_labels import load_zh, zh_score

    assert len(load_zh()) == 60
    score = zh_score()
    assert score.not_found == []
    assert score.macro_f1() >= 0.75  # a secondary figure: labelled by this project


def test_rules_written_for_english_say_nothing_on_chinese():
    """The quality page names the rules that do not apply to Chinese: they find nothing there."""
    english_only = {"INCOSE-R2", "INCOSE-R5", "INCOSE-R10", "INCOSE-R15", "INCOSE-R19"}
    english_only |= {"INCOSE-R20", "INCOSE-R30", "INCOSE-R38"}
    text = (ROOT / "tests" / "data" / "check" / "zh-labelled.md").read_text(encoding="utf-8")
    found = {f.rule for f in check_document(text).findings}
    assert not found & english_only
    page = (ROOT / "docs" / "quality.md").read_text(encoding="utf-8")
    sentence = page[page.index("Rules that do not apply to Chinese") :][:600]
    for rule in english_only:
        assert rule.removeprefix("INCOSE-") in sentence, rule


# --- speed -------------------------------------------------------------------------------


def _seconds(requirements: int) -> float:
    from benchmarks.check_speed import synthetic_document

    text = synthetic_document(requirements)
    best = float("inf")
    for _ in range(2):
        started = time.process_time()
        report = check_document(text)
        best = min(best, time.process_time() - started)
    assert len(report.requirements) == requirements
    return best


def test_time_grows_linearly_with_the_requirements():
    """Four times the requirements take well under six times the processor time (checking
    all pairs would take sixteen). A ratio measured in one process, so it holds on any
    machine; the seconds themselves (the 3 s goal for 10,000 requirements) depend on the
    machine and are measured by benchmarks/check_speed.py, reported on the Quality page."""
    small, large = _seconds(2500), _seconds(10000)
    assert large < 6 * small, (small, large)


# --- the JSON and the faster paths give what the old ones gave ------------------------------


def test_a_finding_as_a_dict_has_every_field_in_order():
    report = check_document("- FR-01: 系统应快速响应。\n- FR-02: It shall be fast.\n")
    for finding in report.findings:
        assert json.dumps(finding.as_dict()) == json.dumps(dataclasses.asdict(finding))


def test_the_json_is_written_as_json_dumps_writes_it():
    from reqstudio.check.jsonout import dumps_indented

    report = check_document((ROOT / "tests" / "data" / "check" / "zh-srs.md").read_text("utf-8"))
    data = {"file": "x.md", **report.as_dict()}
    odd = {
        "a": [], "b": {}, "c": None, "d": 1.5, "e": [1, [2, {}]], "f": True, "g": '"\\\n\t',
        "h": "\u2028\x7f\x1f<", "i": 0.333, 7: -0.0, "j": 10**18, "k": "需求“引号”",
    }  # fmt: skip
    for value in (data, odd, [], {}, "text", 3):
        assert dumps_indented(value) == json.dumps(value, ensure_ascii=False, indent=2)


def test_headings_are_found_as_the_markdown_parser_finds_them():
    from reqstudio.check.headings import section_starts, skeleton
    from reqstudio.document_model import parse_markdown

    def parsed(text: str) -> list[tuple[int, str, str]]:
        document = parse_markdown(text)
        starts, line = [], (document.preamble + (document.title_heading or "")).count("\n")
        for section in document.sections:
            starts.append((line, section.title, section.id))
            line += (section.heading or "").count("\n") + section.content.count("\n")
        return starts

    texts = [
        path.read_text(encoding="utf-8", errors="replace")
        for path in sorted((ROOT / "tests" / "data" / "check").glob("*.md"))
    ]
    texts += [
        "# Title\n\n## 1 A\n\ntext\n## 2 B ##\n- item\n",
        "Title\n=====\n\n- a\n---\n\n<!--\nlong -->\n# H\n",
        "para one\npara two\n---\n",
        "- item\n  # inner\n# outer\n",
        "```\n# no\n```\n# yes\n",
        "1 Intro\n\ntext\n\n3.1 Functions\n\nThe system shall.\n",
        "# A",
        "## ###\n#no\n####### seven\n#\tTab\n",
    ]
    for text in texts:
        assert section_starts(text) == parsed(text), text[:60]
        assert parsed(skeleton(text)) == parsed(text), text[:60]


def test_a_word_list_finds_what_one_alternation_of_its_phrases_finds():
    """Each phrase its own pattern, tried only where its key word is: the same matches as
    one alternation, longest phrase first, scanned from the left."""
    from reqstudio.check.rules import word_list

    texts = [
        "The system shall not, as far as possible, show more than the most recent 5 items.",
        "It shall be as simple as possible and as soon as possible, if possible, etc.",
        "No product is shown; there is no reply. The user cannot log in and won't retry.",
        "All users and any of the roles, at least one, each other, every day.",
    ]
    for language, name in [("en", n) for r in catalog().values() for n in r.lists]:
        words = word_list(language, name)
        for text in texts:
            pattern = words.matcher(text)
            expected = []
            if pattern is not None:
                exceptions = words.exceptions
                spans = [m.span() for m in exceptions.finditer(text)] if exceptions else []
                for match in pattern.finditer(text):
                    a, b = match.span()
                    if any(x <= a and b <= y for x, y in spans):
                        continue
                    term = match.group()
                    if term.lower() in words.unless_number:
                        from reqstudio.check.rules import _NUMBER_AHEAD

                        if _NUMBER_AHEAD.match(text, b):
                            continue
                    expected.append((a, b, term))
            assert words.matches(text) == expected, (name, text)
