"""Every ReqIF file real tools wrote (DOORS, Polarion, Capella, Enterprise Architect, Eclipse
RMF, StrictDoc; tests/data/reqif/samples/README.md) imports, each element not read named on a
line of its own; and each comes back unchanged from an export and a second import, the export
valid against the OMG ReqIF 1.2 schema."""

from __future__ import annotations

import json
import re

import pytest

from reqstudio.workspace.loading import load_items
from reqstudio.workspace.reqif_out import build_reqif
from tests.reqif_support import SAMPLES, reqstudio, schema_errors

# what each tool's file holds, as a person reading it would count it
EXPECTED = {
    "capella-requirements-vp.reqif": {"items": 1, "ids": ["PUID-1"]},
    "doors-user-02.reqif": {"items": 3, "ids": ["AMR-REF-1", "AMR-REF-2", "AMR-REF-3"]},
    "doors-user-03.reqif": {"items": 1},
    "doors-user-04.reqif": {"items": 1},
    "eclipse-rmf.reqif": {"items": 6},
    "enterprise-architect-8.reqif": {"items": 3},
    "polarion.reqif": {"items": 2, "ids": ["SEC-1", "LOREM-818"]},
    "strictdoc.reqif": {"items": 18},
    "xhtml-attribute.reqif": {"items": 1},
}


def test_every_sample_is_listed():
    assert sorted(p.name for p in SAMPLES) == sorted(EXPECTED)


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_every_sample_imports_with_a_line_per_skipped_element(sample, tmp_path):
    done = reqstudio("import", sample, "--json", cwd=tmp_path)
    assert done.returncode in (0, 4), done.stderr
    data = json.loads(done.stdout)
    expected = EXPECTED[sample.name]
    assert len(data["items"]) == expected["items"]
    if "ids" in expected:
        assert [item["id"] for item in data["items"]] == expected["ids"]
    for item in data["items"]:
        assert set(item) == {"id", "uid", "text", "section", "kind", "attributes", "links"}
        assert item["id"] and len(item["uid"]) == 36
    # partial is said, never silent: exit 4 exactly when something was skipped
    assert (done.returncode == 4) == bool(data["skipped"])
    assert all(isinstance(line, str) and line for line in data["skipped"])


def test_what_the_samples_say_is_read():
    polarion = load_items(SAMPLES[[p.name for p in SAMPLES].index("polarion.reqif")])
    heading, requirement = polarion.items
    assert (heading.kind, heading.text, heading.section) == (
        "heading",
        "Section 1",
        ["Test Export"],
    )
    assert requirement.text == "The Lorem Ipsum shall do something."  # XHTML to text
    assert requirement.section == ["Test Export", "Section 1"]  # the SPEC-HIERARCHY
    assert requirement.attributes["status"] == "Draft"  # an enumeration, by its value's name
    ea = load_items(next(p for p in SAMPLES if p.name.startswith("enterprise")))
    assert [i.kind for i in ea.items] == ["functional", "functional", "non-functional"]
    # its hierarchy and relation name objects the file does not hold: each said, not dropped
    assert sum("FUNC-REQ-1" in line for line in ea.skipped) == 2
    doors = load_items(next(p for p in SAMPLES if p.name == "doors-user-04.reqif"))
    assert len([line for line in doors.skipped if "not declared" in line]) == 11
    assert doors.items[0].attributes["_3ca983d9-5ec5-4752-898f-37ab52beafd0"] == "<FOOOOO> BAR"


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_round_trip_keeps_items_ids_hierarchy_attributes_and_links(sample, tmp_path):
    first = load_items(sample)
    exported = tmp_path / "out.reqif"
    exported.write_text(build_reqif(first), encoding="utf-8")
    assert schema_errors(exported) == []
    second = load_items(exported)
    assert [i.as_dict() for i in second.items] == [i.as_dict() for i in first.items]


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.name)
def test_a_skipped_line_is_worded_in_the_readers_language(sample):
    """The command line prints each skipped line in English, as before; the browser words
    the same line in the page's language from the catalogue: in Chinese, no English word is
    left outside the element names and identifiers the file itself holds."""
    from reqstudio.workspace.skips import Skip, skip_words

    for line in load_items(sample).skipped:
        assert isinstance(line, Skip), line
        assert skip_words(line, "en-US") == str(line)
        chinese = skip_words(line, "zh-CN")
        if line.code == "unreadable":  # the ReqIF library's own message, as it gives it
            assert chinese.endswith(line.values["reason"])
            continue
        assert chinese != str(line)
        own = {str(value) for value in line.values.values()} | {line.member}
        words = set(re.findall(r"[A-Za-z][A-Za-z.]+", chinese))
        element_names = {"SPEC-OBJECT", "SPEC-HIERARCHY", "SPEC-RELATION", "RELATION-GROUP"}
        element_names |= {"REQ-IF-CONTENT", "TOOL-EXTENSIONS", "ReqIF.Text", "Text"}
        element_names |= {"Description", "SPEC", "OBJECT", "HIERARCHY", "RELATION", "GROUP"}
        element_names |= {"REQ", "IF", "CONTENT", "TOOL", "EXTENSIONS"}
        leftover = {w for w in words if w not in element_names and not any(w in v for v in own)}
        assert not leftover, (chinese, leftover)


def test_a_skipped_line_keeps_its_words_when_kept_in_a_session():
    import pickle

    from reqstudio.workspace.skips import Skip

    line = Skip("relation_group", "a.reqif", group="G-1", name="", count=2)
    again = pickle.loads(pickle.dumps(line))
    assert (again, again.code, again.values) == (line, line.code, line.values)
    assert "未命名" in again.words("zh") and "(unnamed)" in again
