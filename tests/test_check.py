"""`reqstudio check`: the deterministic requirements checker, as a user runs it (a real
process) and as the SRS pipeline uses it. The expected findings on the PURE documents were
written by hand from the documents' text (tests/data/check/labels.txt holds the full labels)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from benchmarks.check_benchmark import evaluate, load_labels, micro
from reqstudio.check.ears import ears_template
from reqstudio.check.engine import CheckReport, check_document
from tests.pure_documents import PURE

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "check"
E_STORE = PURE / "2007-e-store-doc" / "reference.md"
AGENTMOM = PURE / "2003-agentmom-pdf" / "reference.md"
ZH = DATA / "zh-srs.md"
HEAVY = ("langchain_core", "langchain_openai", "langgraph", "openai", "chainlit", "sqlalchemy")


def run_check(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    return subprocess.run(
        [sys.executable, "-m", "reqstudio.cli", "check", *args],
        cwd=ROOT,
        env={**clean, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8", **env},
        capture_output=True, text=True, encoding="utf-8", timeout=120,
    )  # fmt: skip


def check_json(path: Path) -> dict:
    done = run_check(str(path), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def rules_at(data: dict, line: int) -> set[str]:
    """The rules (and their `also`) of the findings on the requirement starting at `line`."""
    found: set[str] = set()
    for finding in data["findings"]:
        if finding["line"] == line and finding["requirement_id"]:
            found |= {finding["rule"], *finding["also"]}
    return found


# --- the PURE documents, expected findings written by hand ---------------------------------


def terms_of(rule: str, also: bool = True) -> Callable[[str], list[str]]:
    """The terms `rule` flags in one requirement: as its own finding or, with `also`, as a rule
    folded into another finding of the same words."""

    def terms(text: str) -> list[str]:
        report = check_document(f"- FR-01: {text}\n")
        return [
            f.term for f in report.findings if rule in ((f.rule, *f.also) if also else (f.rule,))
        ]

    return terms


def lines_flagged(report: CheckReport, rule: str) -> list[int]:
    """The lines of the findings of `rule` in `report`, in its order."""
    return [f.line for f in report.findings if f.rule == rule]


def test_e_store_findings():
    data = check_json(E_STORE)
    expected = {
        # "The system shall not leave any cookies on the customer's computer ..."
        541: {"ISO29148-negative"},
        # "... shall never display a customer's password.  It shall always be echoed ..."
        551: {"ISO29148-negative", "SRS-singular", "ISO29148-vague-pronoun", "INCOSE-R26"},
        # "... allow user to add/remove products in the shopping cart."
        361: {"INCOSE-R17"},
        # "... a standard web page development tool that conforms to either IBM's CUA standards"
        588: {"ISO29148-incomplete-reference", "SRS-acronym-undefined", "INCOSE-R2"},
        # "It shall be as per the industry standard."
        741: {"ISO29148-vague-pronoun", "ISO29148-incomplete-reference"},
        # "... compatible to any browser such as Internet Explorer, Mozilla or Netscape"
        654: {"ISO29148-open-ended"},
        # "The product shall take initial load time depending on internet connection strength"
        520: {"SRS-nfr-unmeasured"},
        # "... display the most frequently searched items by the user in the profile."
        309: {"ISO29148-superlative"},
        # "... display detailed information of the selected products."
        255: {"ISO29148-ambiguous"},
    }
    for line, rules in expected.items():
        assert rules <= rules_at(data, line), (line, rules_at(data, line))
    # requirements a reader finds clean have no finding
    for line in (225, 271, 390, 413, 456, 644):
        assert rules_at(data, line) == set(), line
    # "... display all the available components ...": a quantifier, which the people who
    # labelled the ARTA sets flag as a vague pronoun (tests/data/labelled/)
    assert rules_at(data, 228) == {"ISO29148-indefinite-pronoun"}
    # "... select the support type he wants": he is the user, the only person named
    assert "ISO29148-vague-pronoun" not in rules_at(data, 322)
    # "... provide ... 99.9999% availability": measured
    assert "SRS-nfr-unmeasured" not in rules_at(data, 504)
    # FAQ and CRM are defined in the glossary (section 1.3) before the requirements use them
    acronyms = {f["term"] for f in data["findings"] if f["rule"] == "SRS-acronym-undefined"}
    assert {"CUA", "EJB"} <= acronyms and not {"FAQ", "CRM", "RAID", "HTTP"} & acronyms
    # no requirement of the e-store SRS has an id: one finding for the whole document
    [missing] = [f for f in data["findings"] if f["rule"] == "SRS-missing-id"]
    assert missing["requirement_id"] == "" and missing["line"] == 0
    summary = data["summary"]
    assert summary["requirements"] == len(data["requirements"]) > 100
    assert 0 < summary["score"] < 1
    assert summary["ears"]["by_template"]["ubiquitous"] > 80


def test_agentmom_findings():
    data = check_json(AGENTMOM)
    by_id = {r["requirement_id"]: r for r in data["requirements"]}
    assert "3.2.1.1" in by_id and "3.2.6.1" in by_id
    # "3.2.1.1 *agentMom shall support the ability to send unicast message.": "support" is
    # 29148's own example of a non-verifiable term, and people flag it (tests/data/labelled/)
    assert rules_at(data, by_id["3.2.1.1"]["line"]) == {
        "INCOSE-R10",
        "ISO29148-open-ended",
        "INCOSE-R9",
    }
    # "3.2.2.5 agentMom shall not allow receiving multicast message from a group before ..."
    assert "ISO29148-negative" in rules_at(data, by_id["3.2.2.5"]["line"])
    # "3.2.1.3 Unicast message shall only be received by the specified address."
    assert "INCOSE-R2" in rules_at(data, by_id["3.2.1.3"]["line"])
    assert rules_at(data, by_id["3.2.1.4"]["line"]) == set()
    # every requirement has a numbered id, none repeats
    rules = {f["rule"] for f in data["findings"]}
    assert not {"SRS-missing-id", "SRS-duplicate-id"} & rules
    assert by_id["3.2.1.1"]["ears"] == "ubiquitous"
    # section headings like "3.2.1 Unicast Communication" are not requirements
    assert "3.2.1" not in by_id


def test_the_json_shape():
    data = check_json(E_STORE)
    assert set(data) == {
        "file", "summary", "findings", "requirements", "cross_requirement", "suppressed",
    }  # fmt: skip
    assert set(data["summary"]) == {
        "requirements", "with_findings", "findings", "score", "by_rule", "ears",
        "cross_requirement", "suppressed",
    }  # fmt: skip
    assert data["suppressed"] == [] and data["summary"]["suppressed"] == 0  # no verdicts given
    assert set(data["summary"]["ears"]) == {"matched", "share", "by_template"}
    for finding in data["findings"]:
        assert {"requirement_id", "rule", "message", "section", "line", "also", "term"} <= set(
            finding
        )
        assert finding["rule"] and finding["message"]
    assert data["summary"]["findings"] == len(data["findings"])
    assert sum(data["summary"]["by_rule"].values()) == len(data["findings"])
    requirement = data["requirements"][0]
    assert set(requirement) == {"requirement_id", "line", "section", "ears", "text"}


# --- Chinese ---------------------------------------------------------------------------


def test_chinese_document():
    data = check_json(ZH)
    found = {(f["requirement_id"], f["rule"]) for f in data["findings"]}
    assert found == {
        ("FR-01", "ISO29148-subjective"),  # 友好的图书搜索界面
        ("FR-04", "ISO29148-negative"),  # 不得在日志中记录
        ("FR-04", "ISO29148-open-ended"),  # 支持; 图书、音像、文具等商品
        ("FR-04", "SRS-duplicate-id"),  # FR-04 twice
        ("FR-05", "SRS-singular"),  # 应记录……并且应发送
        ("FR-06", "SRS-unknown-reference"),  # FR-99 does not exist
        ("FR-07", "SRS-acronym-undefined"),  # CDN is not defined (SLA is, in the table)
        ("NFR-01", "ISO29148-subjective"),  # 快速: an evaluative word (ambiguous too)
        ("NFR-01", "SRS-nfr-unmeasured"),  # 快速响应, no number
    }
    ears = [r["ears"] for r in data["requirements"]]
    assert ears == [
        "ubiquitous", "event-driven", "unwanted", "ubiquitous", "ubiquitous", None,
        "ubiquitous", "ubiquitous", "ubiquitous", "ubiquitous", "state-driven",
    ]  # fmt: skip
    assert data["summary"]["ears"]["share"] == round(10 / 11, 3)


def test_the_text_report_in_chinese_groups_by_section():
    done = run_check(str(ZH), "--lang", "zh")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "## 2 功能需求" in lines and "## 3 非功能需求" in lines
    assert any("FR-06" in line and "引用了 FR-99" in line for line in lines)
    assert lines[-1].startswith("11 条需求，7 条有问题")


def test_the_text_report_in_english():
    done = run_check(str(ZH), "--lang", "en")
    assert done.returncode == 0, done.stderr
    assert "refers to FR-99, which no requirement has as its id" in done.stdout
    assert done.stdout.rstrip().endswith(
        "11 requirements, 7 with findings, 10 findings, score 0.36; EARS: 10/11 match "
        "(ubiquitous 7, event-driven 1, state-driven 1, unwanted 1)"
    )


# --- structure rules and EARS on small texts -------------------------------------------


def test_structure_rules():
    report = check_document(
        "# SRS\n\n"
        "## Requirements\n\n"
        "- FR-01: The TMS shall show the order.\n"
        "- FR-01: The system shall print the order.\n"
        "- The system shall archive the order.\n"
        "- FR-02: The system shall send the order as FR-01 and UC-3 describe.\n"
        "- NFR-01: The response time shall be short.\n"
        "- NFR-02: The response time shall be at most 2 seconds.\n"
        "- FR-03: The system displays the invoice.\n\n"
        "## Glossary\n\n"
        "Transport Management System (TMS).\n"
    )
    found = {(f.requirement_id, f.rule) for f in report.findings}
    assert ("FR-01", "SRS-duplicate-id") in found
    assert ("L7", "SRS-missing-id") in found  # the requirement without an id, by its line
    assert ("FR-02", "SRS-unknown-reference") not in found  # FR-01 exists; UC is no id prefix here
    assert ("NFR-01", "SRS-nfr-unmeasured") in found
    assert ("NFR-02", "SRS-nfr-unmeasured") not in found
    assert ("FR-03", "SRS-no-shall") in found
    [acronym] = [f for f in report.findings if f.rule == "SRS-acronym-undefined"]
    assert acronym.term == "TMS" and "before its definition (line 15)" in acronym.message


def test_a_document_without_requirements():
    report = check_document("# Notes\n\nNothing to require here.\n")
    assert report.requirements == [] and report.findings == []
    assert report.summary()["score"] is None


@pytest.mark.parametrize(
    ("text", "template"),
    [
        ("The system shall log each login.", "ubiquitous"),
        ("When the user logs in, the system shall log the time.", "event-driven"),
        ("While the system is in standby, the system shall refuse orders.", "state-driven"),
        ("Where a printer is attached, the system shall print receipts.", "optional"),
        ("If the payment fails, then the system shall keep the cart.", "unwanted"),
        ("While in standby, when a key is pressed, the system shall wake.", "complex"),
        ("The system shall notify the user when no product is found.", None),
        ("The system shall log it. It shall keep the log.", None),
        ("The system logs each login.", None),
    ],
)
def test_ears_templates_in_english(text, template):
    assert ears_template(text, "en") == template


@pytest.mark.parametrize(
    ("text", "template"),
    [
        ("系统应记录每次登录。", "ubiquitous"),
        ("当用户登录时，系统应记录登录时间。", "event-driven"),
        ("在维护模式下时，系统应拒绝新的订单。", "state-driven"),
        ("在包含打印机的情况下，系统应打印小票。", "optional"),
        ("如果支付失败，那么系统应保留购物车。", "unwanted"),
        ("系统记录每次登录。", None),
    ],
)
def test_ears_templates_in_chinese(text, template):
    assert ears_template(text, "zh") == template


def test_pronouns_are_flagged_only_when_their_referent_is_unclear():
    pronouns = terms_of("ISO29148-vague-pronoun", also=False)

    assert pronouns("The system shall allow the user to change his password.") == []
    # two candidates of its number before it: the system or the product
    assert pronouns("The system shall display each product, when it is selected.") == ["it"]
    assert pronouns("The browser shall hide the password. It shall be masked.") == ["It"]
    assert pronouns("This shall be the default.") == ["This"]
    assert pronouns("The system shall display this page.") == []  # a determiner
    # an anticipatory "it" refers to nothing: the two annotators of the ReqEval sentences
    # found it ambiguous about as often as not, and the rule names the entity it hides
    assert pronouns("It shall be possible to select the level manually.") == ["It"]
    assert pronouns("It MUST be clearly defined which data are sensitive.") == ["It"]
    assert pronouns("It should never be necessary to access a CPU directly.") == ["It"]


def test_a_purpose_infinitive_is_flagged_and_a_completing_one_is_not():
    purposes = terms_of("INCOSE-R20")

    assert purposes("Network switches shall be employed to distribute traffic.") == [
        "to distribute"
    ]
    # one finding for the words two rules flag: "meet RFI specifications" names no version
    assert purposes("Pathways shall be fiber optic to meet RFI specifications.") == [
        "meet RFI specifications"
    ]
    assert purposes("The system shall allow the user to select a product.") == []
    assert purposes("The system shall be able to export the report.") == []
    assert purposes("The system shall display the components to configure.") == []  # which
    assert purposes("The system shall use a power switch to change the state.") == []  # how
    assert purposes("The page shall offer the option to export the list.") == []


def test_a_combinator_before_a_second_predicate_and_not_inside_a_subject():
    combinators = terms_of("INCOSE-R19")

    # "and is", "or be", "and cannot": a second predicate of the same subject
    assert combinators("The frequency is set by the channel number and is defined in EN 301.") == [
        "and"
    ]
    assert combinators("The DMI shall display or be compatible with the national data.") == ["or"]
    assert combinators("Categories are generated by the system and cannot be deleted.") == ["and"]
    assert combinators("The window shall list buildings and summarizing their status.") == ["and"]
    assert combinators("The tool shall adjust it to increase or decrease the detection.") == ["or"]
    # a verb's form inside the subject names a thing: "access management"
    assert combinators("Identity and access management MUST provide a log-in form.") == []
    # ... but after a clause it starts a second one
    assert combinators(
        "Errors shall be logged as described and selected errors shall be reported to the user."
    ) == ["and"]


def test_references_that_name_no_document_or_version():
    references = terms_of("ISO29148-incomplete-reference")

    assert references("The radio shall work under the above environmental conditions.") == [
        "the above"
    ]
    assert references("The layout is depicted in Error! Reference source not found.") == [
        "Reference source not found"
    ]
    assert references("The data shall be provided to NASA PDS in PDS-compliant form.") == [
        "PDS-compliant"
    ]
    assert references("The data shall be managed according to the data sharing agreements.") == [
        "according to the data sharing agreements"
    ]
    assert references(
        "Product MUST send the logbook at events defined in Community legislation."
    ) == ["defined in Community legislation"]
    assert references("A procedure MUST be defined in order to simplify the process.") == []
    # an obligation to define something is no placeholder ("to be defined" is one)
    assert references("The technical means has to be defined by the pilot.") == []
    assert references("The port number is to be defined.") == ["to be defined"]


def test_purpose_phrases_named_as_such_or_with_so():
    purposes = terms_of("INCOSE-R20")

    assert purposes("The System shall register Users for the purpose of controlling access.") == [
        "for the purpose of"
    ]
    assert purposes("Users must have antivirus software so they can scan incoming files.") == [
        "so they can"
    ]
    assert purposes("For determining battery life, the duty cycles shall be as in table 4.") == [
        "For determining battery life,"
    ]
    assert purposes("The ETCS shall receive National values to adapt to National rules.") == [
        "to adapt"
    ]
    assert purposes("The purpose of the log shall be stated in the manual.") == []


def test_frequencies_and_durations_without_a_value_are_vague():
    vague = terms_of("ISO29148-ambiguous")

    assert vague("Infrequent and slight condensation shall not lead to a failure.") == [
        "Infrequent",
        "slight",
    ]
    assert vague("The ceiling speed may be shown momentarily when selected.") == ["momentarily"]
    assert vague("The window shall change location on the screen periodically.") == ["periodically"]
    assert vague("The tool shall monitor the unit for an indefinite period.") == ["indefinite"]
    assert vague("The module shall boot in a near real-time environment.") == ["near real-time"]
    # "as well as" is "and"; "sensitive data" names a class of data
    assert vague("The tool shall read the devices as well as the data files.") == []
    assert vague("The interface shall accept sensitive operator data.") == []
    assert vague("The code shall be well documented.") == ["well"]


def test_an_oblique_inside_a_unit_is_no_finding():
    obliques = terms_of("INCOSE-R17")

    assert obliques("The unit shall cope with variations of up to 1°C/minute.") == []
    assert obliques("The unit shall withstand solar radiation of up to 1200 W/m2.") == []
    assert obliques("The coverage level shall be 38.5 dBµV/m.") == []
    assert obliques("The user shall add/remove items.") == ["add/remove"]


def test_a_negative_is_flagged_in_a_condition_too():
    """People outside the project flag every negative word, in a condition too (the ARTA
    sets, tests/data/labelled/); a bound written with "no ... than" is none."""

    negatives = terms_of("ISO29148-negative")

    assert negatives("When the equipment is isolated, the system shall not show any data.") == [
        "shall not"
    ]
    assert negatives("When no product is found, the system shall display a message.") == ["no"]
    assert negatives("The reply shall take no longer than 2 s.") == []


def test_examples_are_not_open_ended_but_support_is():
    """Neither ARTA set labels "e.g.", "such as" or "for example" non-verifiable: examples
    are not open-ended. "support" and "as a minimum" (29148's own examples) are."""

    open_ended = terms_of("ISO29148-open-ended")

    assert open_ended("The product MUST send the reports eg by email.") == []
    assert open_ended("The product shall export formats such as CSV.") == []
    assert open_ended("The system shall support the concept of user.") == ["support"]
    assert open_ended("The log shall hold, as a minimum, the date.") == ["as a minimum"]


def test_an_indefinite_article_before_an_actor_not_before_a_thing_made():
    articles = terms_of("INCOSE-R5")

    assert articles("The System shall allow an authorized user to adjust priorities.") == [
        "an authorized user"
    ]
    assert articles("The CAUI shall enable a quality manager to apply flags.") == [
        "a quality manager"
    ]
    assert articles("The system shall allow a user to log in.") == ["a user"]
    # "a report", "an interface": a new thing the requirement makes or provides
    assert articles("The system shall provide an interface to generate a report.") == []


def test_parentheses_around_an_acronym_it_does_not_define_carry_content():
    parentheses = terms_of("INCOSE-R21")

    assert parentheses("The ELSS must use English (UK) localizations for all features.") == ["(UK)"]
    assert parentheses("ESPC shall connect to the Mission Management Center (MMC).") == []
    assert parentheses("Messages shall use the Extensible Markup Language (XML).") == []


def test_quality_topics_without_a_number_are_unmeasured():
    unmeasured = terms_of("SRS-nfr-unmeasured", also=False)

    assert unmeasured("The system must give stable and reproducible results.") == ["stable"]
    assert unmeasured("The system shall check the data as soon as they arrive.") == ["as soon as"]
    assert unmeasured("The system shall provide an automatic failover capability.") == ["failover"]
    assert unmeasured("The design shall expect an operational lifetime of many years.") == [
        "lifetime"
    ]
    assert unmeasured("The design shall expect an operational lifetime of 15 years.") == []


def test_no_longer_and_a_bound_with_its_reference_are_no_comparatives():
    comparatives = terms_of("ISO29148-comparative")

    assert (
        comparatives("The train shall leave the mode when the unit is not active any longer.") == []
    )
    assert comparatives("The tool shall stop when input data are no longer available.") == []
    assert comparatives("The speed shall be lower than or equal to the shunting speed.") == []
    assert comparatives("The new release shall be faster.") == ["faster"]


def test_a_passive_with_its_be_left_out_after_a_conjunction():
    passives = terms_of("INCOSE-R2")

    assert passives("Product MUST encrypt the file when sent as an email attachment.") == [
        "when sent as"
    ]
    assert passives("The vibrations to be withstood shall be 0.25g.") == ["be withstood"]
    assert passives("The radio shall operate as defined in EN 301.") == []


def test_file_formats_every_engineer_knows_need_no_definition():
    report = check_document("- FR-01: The system shall store images as JPEG and archives as ZIP.\n")
    assert [f.term for f in report.findings if f.rule == "SRS-acronym-undefined"] == []
    report = check_document("- FR-01: The system shall send the files to the FMC.\n")
    assert [f.term for f in report.findings if f.rule == "SRS-acronym-undefined"] == ["FMC"]


def test_fully_permanently_and_indefinitely_are_absolutes():
    absolutes = terms_of("INCOSE-R26")

    assert absolutes("The documents shall fully document the instrument parameters.") == ["fully"]
    # one finding with the passive it sits in
    assert absolutes("Default values shall be permanently stored on board.") == [
        "be permanently stored"
    ]
    assert absolutes("The hardware shall be able to perform indefinitely.") == ["indefinitely"]


def test_obvious_and_comprehensible_are_subjective():
    subjective = terms_of("ISO29148-subjective")

    assert subjective("Missing data shall be shown by an obvious indicator.") == ["obvious"]
    assert subjective("Comprehensible specifications shall be available.") == ["Comprehensible"]


def test_converted_layouts_read_as_their_requirements():
    rules = (
        "3.2.6. Business Rules: \n"
        "1.2. The Department Name must be unique across the inventory \n"
        "1.3. The Unique Tag must be at most 18 characters long \n"
        "1.8.1. The ID of the item in POS is set to the Unique Tag \n"
        "\n"
        "3.2.7. Post-Condition(s): \n"
        "1.1. The new Department is added \n"
    )
    report = check_document(rules)
    # one requirement a numbered line; a rules part's statement without "must" is one too
    # (reported as such); a post-condition is not
    assert [r.line for r in report.requirements] == [2, 3, 4]
    assert lines_flagged(report, "SRS-no-shall") == [4]

    record = (
        "FR-UA 1\n"
        "Requirement Definition: The system shall support an administrator level.\n"
        "\n"
        "12\n"
        "\n"
        "Requirement Specification: The administrator shall have the following privileges:\n"
        "a. Ability to reset user passwords when needed\n"
        "\n"
        "Origin: Customer interview\n"
    )
    report = check_document(record)
    # Definition and Specification are one requirement, across a page number
    assert [r.line for r in report.requirements] == [1]
    assert "reset user passwords" in report.requirements[0].text
    assert "Customer interview" not in report.requirements[0].text
    assert any(f.rule == "SRS-singular" for f in report.findings)

    # a table flattened to lines: the id (wrapped: "F-" / "161B1"), the requirement in a
    # narrow cell, then the source, allocation and comment cells; a "(M)" status mark
    cells = "\nConOps 3.5\nQChS,\nCAS\nThe rules may vary (see the comment).\nH\n"
    row = (
        "F-161\nThe Clarus system shall be\nable to implement quality\nchecking rules.{cells}"
        "F-\n161B1\nThe CAS shall be able to\nconfigure the rules.{cells}"
    )
    table = "".join(row.format(cells=cells).replace("161", str(n)) for n in range(161, 167))
    report = check_document(table + "\nR-7 The train speed shall be shown. (M)\n")
    texts = {r.id: r.text for r in report.requirements}
    assert texts["F-163"] == (
        "F-163 The Clarus system shall be able to implement quality checking rules."
    )  # a line repeated in every row is the table's, not a page header
    assert texts["F-163B1"] == "F- 163B1 The CAS shall be able to configure the rules."
    assert not any(f.rule == "INCOSE-R21" for f in report.findings)


def test_statements_one_a_line_under_a_bare_section_number_are_each_a_requirement():
    flattened = (
        "2.2.1 \n"
        "General Requirements \n"
        "The ELSS must capture all data needed for recording the fishing activities. \n"
        "The ELSS must output the data as an XML file for transmission to the \n"
        "fisheries system. \n"
        "The ELSS data must be validated before transmission from the vessel. \n"
        "The ELSS should at least be able to transmit data via email. \n"
        "\n"
        "The system's back-end servers shall never display a customer's password.\n"
        "The customer's password may be reset but never shown.\n"
        "\n"
        "3.10.1 \n"
        "Hardware - complete and comprehensible hardware systems \n"
        "specifications shall be readily available. \n"
    )
    report = check_document(flattened)
    # the number and its title are a heading; each statement with its own "must" starts a
    # requirement, and a "should" among them is one (without "shall"); two sentences with
    # one binding word stay one requirement; a title that goes on below is the requirement
    assert [r.line for r in report.requirements] == [3, 4, 6, 7, 9, 12]
    assert report.requirements[0].text.startswith("The ELSS must capture")
    assert "reset but never shown" in report.requirements[4].text
    assert "Hardware" in report.requirements[5].text
    assert lines_flagged(report, "SRS-no-shall") == [7]


def test_a_section_number_like_a_date_is_a_requirement_s_number_not_page_furniture():
    text = (
        "4.5.9 \n"
        "EIRENE mobile equipment shall be capable of being stored at -40°C. (M) \n"
        "4.5.10 \n"
        "The equipment shall be capable of coping with temperature variations. (M) \n"
        "4.5.11 \n"
        "EIRENE mobile equipment shall be capable of operating at altitudes up to 1800m. \n"
        "\n"
        "Created on 7.15.09\n"
        "15.07.2009\n"
        "The radio shall show the date. \n"
    )
    report = check_document(text)
    # "4.5.10" would be 4 May 2010: alone on its line it is the section number; a dotted
    # date needs a four-digit year or words before it to be taken for page furniture
    assert [(r.id, r.line) for r in report.requirements] == [
        ("4.5.9", 1),
        ("4.5.10", 3),
        ("4.5.11", 5),
        ("", 10),
    ]


def test_is_to_be_is_a_modal_verb_for_a_numbered_statement():
    text = (
        "4.3.1 The following GSM teleservices are to be supported for each type of radio:\n"
        "\n"
        "4.3.2 The following features are described in section 2.\n"
    )
    report = check_document(text)
    assert [r.id for r in report.requirements] == ["4.3.1"]
    assert [f.requirement_id for f in report.findings if f.rule == "SRS-no-shall"] == ["4.3.1"]


def test_a_requirement_repeated_under_each_feature_is_not_a_running_header():
    block = (
        "    ▪ REQ-1 - Users are limited to Windows XP, Vista or Mac- OS\n"
        "\n"
        "    ▪ REQ-2 - Users must have pop-up windows enabled on their systems\n"
        "\n"
        "Team members in\n"
        "\n"
    )
    report = check_document(block * 5)
    # the same lines five times: a running header would be dropped; a line that starts
    # with an id and a separator is a requirement each time (a cell's words are not)
    assert [r.id for r in report.requirements] == ["REQ-1", "REQ-2"] * 5


def test_a_named_requirement_is_one_by_its_name():
    text = (
        "    ▪ Virtual-Space Req 2:  Users need Windows XP, Vista, or Mac OS\n"
        "\n"
        "    ▪ Clean GUI Req 3:  Users are limited to Internet Explorer\n"
        "\n"
        "Requirement 4: The product shall log every upload.\n"
        "\n"
        "The Requirement 5 list is long.\n"
    )
    report = check_document(text)
    assert [r.id for r in report.requirements] == [
        "Virtual-Space Req 2",
        "Clean GUI Req 3",
        "Requirement 4",
    ]
    assert lines_flagged(report, "SRS-no-shall") == [1, 3]


def test_items_under_a_requirement_with_a_modal_of_their_own_are_requirements():
    text = (
        "    ▪ Virtual-Space Req 1:  FTP management software on the server setup\n"
        "      with quota space, user authentication, and appropriate user rights.\n"
        "\n"
        "     a. For the first release, each class needs a quota space of at least\n"
        "        1GB per student in that class.\n"
        "\n"
        "     b. Files causing the quota to be exceeded should not be allowed to\n"
        "        upload.\n"
        "\n"
        "     c. Firewall ports may need to be unblocked on both sides.\n"
        "\n"
        "     d. Are there any ports that have to be opened?\n"
        "\n"
        "     e. The students can see the folder of their class.\n"
        "\n"
        "The installation is described below.\n"
        "\n"
        "     a. The folder should be created by the administrator first.\n"
    )
    report = check_document(text)
    # each item with "needs", "should", "may" is one (without "shall"); a question, an
    # item that says what "can" be, and a list after plain text are not
    assert [r.line for r in report.requirements] == [1, 4, 7, 10]
    assert lines_flagged(report, "SRS-no-shall") == [1, 4, 7, 10]


def test_every_item_of_the_list_a_requirement_introduces_is_part_of_it():
    text = (
        "3.5.1.12 \n"
        "The configuration window shall permit the administrator user to modify the following \n"
        "parameters: \n"
        "a. The password for the administrator user. \n"
        "b. A toggle enabling or disabling the main window as a screen saver. \n"
        "c. Buildings and subsystems to be monitored. \n"
        "\n"
        "3.5.1.13 \n"
        "The configuration window shall display the build number. \n"
    )
    report = check_document(text)
    assert [r.id for r in report.requirements] == ["3.5.1.12", "3.5.1.13"]
    first = report.requirements[0].text
    assert "The password" in first and "A toggle" in first and "Buildings and" in first


def test_a_numbered_title_right_after_a_page_number_starts_the_section():
    text = (
        "3.7 Scalability \n"
        "\n"
        "3.7.1 \n"
        "Hardware - processing hardware shall be easily expandable. \n"
        "\n"
        "EVLA Correlator Monitor and Control SRS \n"
        "12\n"
        "3.8 Security \n"
        "\n"
        "3.8.1 All users of the system shall login using a unique identification.\n"
    )
    report = check_document(text)
    assert [(r.id, r.section) for r in report.requirements] == [
        ("3.7.1", "3.7 Scalability"),
        ("3.8.1", "3.8 Security"),
    ]
    # a requirement of the security section is no unmeasured scalability requirement
    assert lines_flagged(report, "SRS-nfr-unmeasured") == [3]


def test_rfc_keywords_in_capitals_and_should_beside_a_requirement_make_requirements():
    rfc = (
        "• \n"
        "The VCD system MUST provide an interface to upload evidence.\n"
        "• \n"
        "The VCD system SHOULD provide an interface for translators to submit texts.\n"
    )
    report = check_document(rfc)
    assert [r.line for r in report.requirements] == [1, 3]
    assert lines_flagged(report, "SRS-no-shall") == [3]

    advice = (
        "Readers should know the ordering process before reading this document.\n"
        "\n"
        "Section 3 lists the functions of the product and their constraints.\n"
        "\n"
        "The system shall let a customer order a configured product.\n"
        "\n"
        "The system should allow administrators to customize the catalogue.\n"
    )
    report = check_document(advice)
    # a "should" statement next to a binding one is a requirement; advice to a reader is not
    assert [r.line for r in report.requirements] == [5, 7]


def test_providing_a_means_or_a_capability_is_a_superfluous_infinitive():
    report = check_document(
        "The System shall provide the capability for an authorized user to adjust the rate.\n"
        "\n"
        "Product MUST provide a means to allow deletions to be identifiable.\n"
        "\n"
        "The System shall store the data products for 30 days.\n"
    )
    assert lines_flagged(report, "INCOSE-R10") == [1, 3]


def test_a_label_inside_a_longer_requirement_is_judged_on_that_requirement_s_findings(
    tmp_path, monkeypatch
):
    """The benchmark: a labelled requirement the checker read inside a longer block (its line
    is not the block's first) is compared with the findings of that block."""
    import benchmarks.check_benchmark as benchmark

    document = tmp_path / "doc.md"
    document.write_text(
        "FR-1 The table row starts here and\nthe System shall be capable of storing data.\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(benchmark, "document_path", lambda name: document)
    item = benchmark.Item("doc", 2, "U", {"INCOSE-R10"}, "the System shall be capable")
    outcome = benchmark.evaluate([item])
    assert outcome.not_found == []
    assert outcome.counts["INCOSE-R10"]["tp"] == 1


# --- the command -----------------------------------------------------------------------


def test_a_missing_or_unreadable_file_exits_2():
    done = run_check("/nonexistent/srs.md")
    assert done.returncode == 2 and done.stderr.startswith("reqstudio: check: no such file")
    binary = ROOT / "tests" / "data" / "srs" / "uploads" / "binary.txt"
    done = run_check(str(binary))
    assert done.returncode == 2 and done.stderr.startswith("reqstudio: check: "), done.stderr


def test_the_check_loads_no_model_and_needs_no_provider():
    show = (
        "import contextlib, io, json, sys\n"
        "from reqstudio.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    code = main(sys.argv[1:])\n"
        "print(json.dumps({'code': code, 'modules': sorted(sys.modules)}))\n"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "REQSTUDIO_"))}
    done = subprocess.run(
        [sys.executable, "-c", show, "check", str(E_STORE), "--json"],
        cwd=ROOT, env={**clean, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["code"] == 0
    assert not {m.split(".")[0] for m in report["modules"]} & set(HEAVY)
    assert "reqstudio.settings" not in report["modules"]


# --- the measured precision and recall ---------------------------------------------------


NEW_DOCUMENT_MISSES = [
    "2003-pnnl-pdf:2778",
    "2008-virtual-ed-doc:1976",
    "2006-eirene-sys-15-pdf:2441",
    "2006-eirene-sys-15-pdf:3305",
    # 2005-triangle: a bare tag ("AI", "UI-1" with a blank line after it),
    # "there should be the possibility" inside a use case, statements in the present tense
    *(f"2005-triangle-pdf:{n}" for n in (617, 639, 712, 941, 948, 953, 1060, 1114)),
]


def test_the_labelled_set_is_matched_and_the_measured_figures_hold():
    """The parser finds the labelled requirements (all but the few the README names: numbered
    statements with no modal verb, bullets with only "should" or "has to", statements in the
    present tense), and the micro-averaged precision and recall over all rules do not fall
    below the figures the README reports for these project-made labels (dev 0.68 / 0.83,
    held-out 0.60 / 0.81 since the language rules follow the labels of people outside the
    project, tests/data/labelled/; 0.81 / 0.84 and 0.78 / 0.82 before)."""
    from benchmarks.check_benchmark import held_out as held_out_split

    items = load_labels()
    hidden = held_out_split()
    dev = evaluate([i for i in items if i.document not in hidden])
    held_out = evaluate([i for i in items if i.document in hidden])
    assert dev.not_found == [
        "2010-home-1-3-pdf:376",  # "c. The sensor part of the thermostat has a ..."
        "2010-home-1-3-pdf:508",  # "4.4.1 The DigitalHome security system consists of ..."
        "2010-home-1-3-pdf:542",  # "4.6.2 DigitalHome provides a monthly planner."
        *(f"2003-tachonet-pdf:{n}" for n in (1673, 1674, 1762, 1763)),  # "should" bullets
        "2009-inventory-2-0-pdf:518",  # "The system should allow ...", alone
        "2009-inventory-2-0-pdf:754",
        # "has to", "need to", "require", or the present tense ("The tool interface is ...")
        *(f"2009-peppol-pdf:{n}" for n in (1737, 1742, 1745, 1749, 1858, 1883, 1885)),
        *(f"2009-peppol-pdf:{n}" for n in (1888, 1890, 1894, 2495)),
        "2010-fishing-pdf:261",  # "Each ELSS data transmission will be acknowledged ..."
        "2010-fishing-pdf:369",  # "... may be populated from ...", between descriptions
        "2010-fishing-pdf:380",  # "The ELSS may provide features ..."
        # the three documents added last: statements in the present tense ("3.5.1.26 The
        # smallest time interval ... is one week", "4.1.3 The logical architecture
        # comprises ..."), "It is recommended that ..."
        *NEW_DOCUMENT_MISSES,
    ]
    assert held_out.not_found == ["2001-ctc-network-pdf:367"]
    precision, recall = micro(dev)
    assert precision > 0.67 and recall > 0.82
    precision, recall = micro(held_out)
    assert precision > 0.59 and recall > 0.80


def test_every_ears_template_is_recognised_in_english_and_chinese():
    """The EARS documents' hand labels (tests/data/check/ears-*.md): each template, both
    languages, found with precision 0.9 and recall 0.8 at least (the README's EARS table)."""
    from benchmarks.check_benchmark import precision_recall

    items = [i for i in load_labels() if i.document.startswith("ears-")]
    assert {i.document for i in items} == {"ears-en", "ears-zh"}
    outcome = evaluate(items)
    assert outcome.not_found == []
    assert all(not counts for counts in outcome.counts.values())  # rules not labelled here
    for template, counts in outcome.ears.items():
        precision, recall = (float(x) for x in precision_recall(counts))
        assert precision >= 0.9 and recall >= 0.8, template


def test_the_markdown_tables_for_a_chat_ui():
    from reqstudio.check.report import markdown_tables

    text = markdown_tables(check_document(ZH.read_text(encoding="utf-8")), "zh")
    lines = text.splitlines()
    assert lines[0] == "#### 2 功能需求" and "| 需求 | 行 | 规则 | 说明 |" in lines
    assert "| FR-06 | 17 | `SRS-unknown-reference` | 引用了 FR-99，但没有需求使用该编号 |" in lines
    assert lines[-1].startswith("11 条需求")


def test_annotator_agreement_counts_each_requirement_and_rule_once():
    from benchmarks.check_benchmark import Item, agreement, precision_recall

    first = [
        Item("doc", 10, None, {"INCOSE-R2", "INCOSE-R19"}, "The report shall be sent"),
        Item("doc", 12, None, set(), "The system shall log"),
        Item("doc", 14, None, {"ISO29148-ambiguous"}, "Several users shall"),
    ]
    second = [
        Item("doc", 10, None, {"INCOSE-R2"}, "The report shall be sent"),
        Item("doc", 12, None, {"ISO29148-negative"}, "The system shall log"),
        Item("doc", 99, None, {"INCOSE-R2"}, "a requirement the first did not label"),
    ]
    counts = agreement(first, second)
    assert counts["requirements"] == 2  # line 14 and line 99 are not in both
    assert (counts["tp"], counts["fp"], counts["fn"]) == (1, 1, 1)
    assert precision_recall(counts) == ("0.50", "0.50")


def test_a_numbered_table_row_wrapped_onto_lines_is_one_requirement(tmp_path, monkeypatch):
    """A converted table of requirement numbers and statements: the lines with an empty first
    cell continue the row, a wrapped number ("7.1.1.1" / "0") is 7.1.1.10, and a row of a
    number and a statement is a requirement even without "shall"."""
    table = (
        "|7.1.1.1|Allows resources to be reviewed before a decision is made |\n"
        "|       |whether they should be retained.                          |\n"
        "|7.1.1.1|Converts data to accepted file formats [see Appendix B] as|\n"
        "|0      |needed.                                                   |\n"
        "|7.1.2.5|Any QA errors shall prompt a request for resubmission     |\n"
        "|       |and/or internal action.                                   |\n"
        "|7.1.2.7|Generates statistical and error reports.                  |\n"
    )
    report = check_document(table)
    assert [(r.id, r.line) for r in report.requirements] == [
        ("7.1.1.1", 1),
        ("7.1.1.10", 3),
        ("7.1.2.5", 5),
        ("7.1.2.7", 7),
    ]
    assert report.requirements[0].text.endswith("whether they should be retained.")
    assert report.requirements[2].text.endswith("and/or internal action.")
    assert any(f.line == 7 and f.rule == "SRS-no-shall" for f in report.findings)
    # a table of versions or terms is no requirement
    other = "|1.0|12/01/2009|First draft|\n|Term|A word defined here for the reader|\n"
    assert check_document(other).requirements == []

    # the benchmark matches a label's words after the row's number cell
    import benchmarks.check_benchmark as benchmark

    document = tmp_path / "doc.md"
    document.write_text(table, encoding="utf-8")
    monkeypatch.setattr(benchmark, "document_path", lambda name: document)
    item = benchmark.Item("doc", 7, "N", {"SRS-no-shall"}, "7.1.2.7 Generates statistical")
    assert benchmark.evaluate([item]).counts["SRS-no-shall"]["tp"] == 1


def test_an_id_with_a_space_before_its_number_set_off_by_a_dash():
    """An id like "FR 13 — It shall ...", "NFR 11.1 -- Migration configurations can be built ...": the
    id is the requirement's, and a line that starts with one starts a requirement."""
    text = (
        "NFR 10 — The workflow system shall have a configurable migration strategy.\n"
        "NFR 11 — The migration workflow system will be driven by command line tools\n"
        "NFR 11.1 -- Migration configurations can be built with a web user interface\n"
    )
    report = check_document(text)
    assert [(r.id, r.line) for r in report.requirements] == [
        ("NFR 10", 1),
        ("NFR 11", 2),
        ("NFR 11.1", 3),
    ]
    assert any(f.line == 3 and f.rule == "SRS-no-shall" for f in report.findings)


def test_a_dotted_tag_in_camel_case_is_a_requirement_id():
    """IEEE 830's hierarchical tags ("Game.LoadAI", "GUI.mouseInput"), alone on their line or
    before the statement, each start a requirement (one in the present tense has no "shall");
    "Node.js" is no tag."""
    text = (
        "Game.AutomaticSearch \n"
        "The system searches an external source for \n"
        "games on startup and loads them. \n"
        "Game.Continue \n"
        "The system has an embedded AI that takes \n"
        "over from a player when asked to do so. \n"
        "GUI.mouseInput The system can be used with a mouse \n"
        "\n"
        "Node.js The system shall use a server runtime.\n"
    )
    report = check_document(text)
    assert [(r.id, r.line) for r in report.requirements] == [
        ("Game.AutomaticSearch", 1),
        ("Game.Continue", 4),
        ("GUI.mouseInput", 7),
        ("", 9),
    ]
    assert set(lines_flagged(report, "SRS-no-shall")) == {1, 4, 7}


def test_a_pronoun_s_candidates_are_nouns_not_the_verbs_after_them():
    """The word before a determiner or an object pronoun is a verb, not a noun phrase's head
    ("the game saves all the positions"), and a PDF's ligature starts a word ("ﬁles")."""
    from reqstudio.check.pronouns import pronoun_hits

    def why(text: str) -> list[str]:
        return [h.why for h in pronoun_hits(text, "en")]

    assert why("The system saves all the defined positions so that they are kept.") == []
    assert why("The tool compares the ﬁles and the checksums and reports them.") == [
        "could be checksums or ﬁles"
    ]
    assert why("The user could edit the record and its copy, then print it.") == [
        "could be copy or record"
    ]


def test_compatible_with_an_environment_or_the_requirements_of_a_body_is_a_reference():
    """Being "compatible with" / "compliant with" an environment, "conform to the requirements of"
    a body: references that name no version."""
    from reqstudio.check.lexical import reference_hits

    def terms(text: str) -> list[str]:
        return [h.term for h in reference_hits(text, "en")]

    assert terms("The tools shall be compliant with Java development environments.")
    assert terms("The system must conform to the requirements of the NIH backup site.")
    assert terms("The tools shall be compatible with the Java 1.6 environment.") == []


def test_possibly_and_may_be_necessary_are_loopholes():
    report = check_document(
        "The interface shall use one main window and possibly dialog windows for settings.\n\n"
        "The system shall check the metadata; a conversion may be necessary.\n"
    )
    assert lines_flagged(report, "ISO29148-loophole") == [1, 3]


def test_usability_rapid_response_and_scaling_need_a_number():
    report = check_document(
        "NFR 2 — The tools shall be able to scale to process large collections.\n\n"
        "NFR 8 — The tools shall provide enhanced usability for the major commands.\n\n"
        "PER-05 The system must respond rapidly to user requests.\n\n"
        "PER-06 The system must respond to user requests within 2 seconds.\n"
    )
    assert lines_flagged(report, "SRS-nfr-unmeasured") == [1, 3, 5]


def test_a_user_interface_is_no_indefinite_actor():
    report = check_document(
        "R-1 The tool shall offer a graphical user interface to set up the migration.\n\n"
        "R-2 The tool shall offer a Web User Interface.\n\n"
        "R-3 The tool shall notify a user of the result.\n"
    )
    assert lines_flagged(report, "INCOSE-R5") == [5]


def test_a_spaced_id_or_a_tag_starts_a_requirement_after_one_without_a_stop():
    """Ids like "NFR 16 — ... module" / "FR 27 — It shall ...", "Game.Solitaire ... games" /
    "Game.TwoPlayerSupport": the line with the id starts the next requirement, although the
    one before ends without a stop."""
    report = check_document(
        "NFR 16 — Repackaging filters can be used by the summary module\n"
        "FR 27 — It shall be possible to export summaries in various formats\n"
        "\n"
        "Game.Solitaire \n"
        "The system has support for solitaire games \n"
        "Game.TwoPlayerSupport \n"
        "The system shall support two player turn-based gaming. \n"
    )
    assert [(r.id, r.line) for r in report.requirements] == [
        ("NFR 16", 1),
        ("FR 27", 2),
        ("Game.Solitaire", 4),
        ("Game.TwoPlayerSupport", 6),
    ]


def test_the_rest_of_incose_r7_vague_terms_in_lower_case():
    report = check_document(
        "UI-1 The user interfaces shall follow common guidelines.\n\n"
        "R-2 The system shall perform routine integrity checking.\n\n"
        "R-3 The system shall store the Ancillary Data files.\n"
    )
    assert lines_flagged(report, "ISO29148-ambiguous") == [1, 3]


def test_for_this_purpose_names_a_purpose():
    report = check_document(
        "NFR 1 — The tools shall process several files at once. For this purpose, the tools\n"
        "will group the files by name.\n"
    )
    assert lines_flagged(report, "INCOSE-R20") == [1]


def test_a_combinator_among_the_words_after_another_is_found():
    """In "on both Linux and Windows and should be playable" the first "and" joins two names,
    the second, inside the words read after the first, starts a second predicate."""
    from reqstudio.check.lexical import combinator_hits

    text = "The system shall run on both Linux and Windows and should be playable."
    assert [(h.term, h.start) for h in combinator_hits(text, "en")] == [("and", 47)]


def test_a_dotted_tag_wrapped_onto_the_next_line_is_joined():
    report = check_document(
        "Game.SaveOpeningPosition\ns \nThe system saves all the defined opening positions.\n"
    )
    assert [(r.id, r.line) for r in report.requirements] == [("Game.SaveOpeningPositions", 1)]


def test_a_list_scans_only_the_phrases_a_text_can_hold_and_finds_what_the_whole_list_finds():
    """`WordList.matcher` leaves out the phrases whose key word the text lacks; every list,
    over every line of three documents in both languages, finds exactly what the whole
    list's pattern finds."""
    from reqstudio.check.rules import catalog, word_list

    lines = [
        line
        for path in (
            PURE / "2007-e-store-doc" / "reference.md",
            DATA / "2010-blit-draft.md",
            DATA / "zh-srs.md",
        )
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    lines += [
        "THE SYSTEM SHALL be FAST and/or user-friendly, as appropriate.",
        "系统应当尽可能快。",
    ]
    narrowed = compared = 0
    for language in ("en", "zh"):
        for rule in catalog().values():
            for name in rule.lists:
                for case_sensitive in (False, True):
                    words = word_list(language, name, case_sensitive)
                    if words.pattern is None:
                        continue
                    for line in lines:
                        whole = [(m.start(), m.end()) for m in words.pattern.finditer(line)]
                        matcher = words.matcher(line)
                        found = (
                            [(m.start(), m.end()) for m in matcher.finditer(line)]
                            if matcher
                            else []
                        )
                        assert found == whole, (language, name, line)
                        compared += 1
                        narrowed += matcher is not words.pattern
    assert compared > 10_000 and narrowed > compared / 2  # most scans were narrowed
