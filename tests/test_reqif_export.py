"""`reqstudio export` and `reqstudio import` on documents: a ReqStudio SRS written as ReqIF 1.2
that the OMG schema accepts and DOORS-style importers read (ReqIF.ForeignID, ReqIF.Text as
XHTML, ReqIF.ChapterName, SPEC-HIERARCHY, typed SPEC-RELATIONs, typed attributes), read back
unchanged; bad input refused with one line and exit 2."""

from __future__ import annotations

import json
import zipfile

from lxml import etree

from reqstudio.workspace.items import Item, ItemSet, Link
from reqstudio.workspace.loading import load_items
from reqstudio.workspace.reqif_out import build_reqif
from tests.reqif_support import SAMPLES, reqstudio, schema_errors

NS = {"r": "http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"}
SRS = """# Shop SRS

## 3 Functional requirements

- FR-01 The system shall let customers browse the catalogue by category. Priority: High
- FR-02 The system shall accept payment by credit card, as FR-01's catalogue shows prices.

### 3.2 Orders

- FR-03 The system shall e-mail an order confirmation within 5 minutes. Status: Approved

## 4 Non-functional requirements

- NFR-01 The system shall answer a search within 2 s.

## Traceability matrix

| ID | Requirement | Origin |
|---|---|---|
| FR-01 | The system shall let customers browse the catalogue by category. | request S1 |
"""


def test_a_document_exports_as_valid_reqif_with_the_mapped_fields(tmp_path):
    (tmp_path / "srs.md").write_text(SRS, encoding="utf-8")
    done = reqstudio("export", "srs.md", "--format", "reqif", "--out", "srs.reqif", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = tmp_path / "srs.reqif"
    assert schema_errors(out) == []
    tree = etree.parse(str(out))
    names = {
        d.get("IDENTIFIER"): d.get("LONG-NAME") for d in tree.iterfind(".//r:SPEC-ATTRIBUTES/*", NS)
    }
    assert {"ReqIF.ForeignID", "ReqIF.Text", "ReqIF.ChapterName", "priority", "status",
            "source"} <= set(names.values())  # fmt: skip
    ids = [
        v.get("THE-VALUE")
        for v in tree.iterfind(".//r:SPEC-OBJECT//r:ATTRIBUTE-VALUE-STRING", NS)
        if names[v.find("r:DEFINITION/*", NS).text] == "ReqIF.ForeignID"
    ]
    assert {"FR-01", "FR-02", "FR-03", "NFR-01"} <= set(ids)
    xhtml = tree.find(".//r:ATTRIBUTE-VALUE-XHTML/r:THE-VALUE", NS)
    assert xhtml[0].tag == "{http://www.w3.org/1999/xhtml}div"
    assert tree.find(".//r:ATTRIBUTE-VALUE-ENUMERATION", NS) is not None  # priority, typed
    # FR-03 sits under "3.2 Orders" under "3 Functional requirements": three levels
    assert (
        tree.find(".//r:SPEC-HIERARCHY/r:CHILDREN/r:SPEC-HIERARCHY/r:CHILDREN/r:SPEC-HIERARCHY", NS)
        is not None
    )
    relation_type = tree.find(".//r:SPEC-RELATION-TYPE", NS)
    assert relation_type.get("LONG-NAME") == "refers to"
    assert len(tree.findall(".//r:SPEC-RELATION", NS)) == 1  # FR-02 refers to FR-01

    first = json.loads(reqstudio("import", "srs.md", "--json", cwd=tmp_path).stdout)
    back = reqstudio("import", "srs.reqif", "--json", cwd=tmp_path)
    assert back.returncode == 0, back.stderr
    assert json.loads(back.stdout) == first
    by_id = {item["id"]: item for item in first["items"]}
    assert by_id["FR-01"]["attributes"] == {"priority": "High", "source": "request S1"}
    assert by_id["FR-03"]["section"] == ["Shop SRS", "3 Functional requirements", "3.2 Orders"]
    assert by_id["NFR-01"]["kind"] == "non-functional"
    assert by_id["FR-02"]["links"] == [
        {"type": "refers to", "target": by_id["FR-01"]["uid"], "target_id": "FR-01"}
    ]


def test_reqifz_export_of_a_reqif_file_round_trips(tmp_path):
    sample = next(p for p in SAMPLES if p.name == "polarion.reqif")
    done = reqstudio("export", sample, "--out", "p.reqifz", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / "p.reqifz") as archive:
        [name] = archive.namelist()
        (tmp_path / "inner.reqif").write_bytes(archive.read(name))
    assert schema_errors(tmp_path / "inner.reqif") == []
    again = json.loads(reqstudio("import", "p.reqifz", "--json", cwd=tmp_path).stdout)
    assert again == load_items(sample).as_dict()


def test_several_specifications_links_and_awkward_text_round_trip(tmp_path):
    a = Item("A-1", "", "Line one & <two>\nline \"three\"", ["Spec A"], "functional",
             {"priority": "High", "Note": "R&D <x>"})  # fmt: skip
    b = Item("B-1", "", "Information only", ["Spec B & Co"], "information", {"priority": "Low"})
    loose = Item("C-1", "", "In no specification", [], "constraint")
    items = ItemSet([a, b, loose], title="T")
    from reqstudio.workspace.items import assign_uids

    assign_uids(items.items)
    a.links.append(Link("derives <from>", b.uid, b.id))
    path = tmp_path / "x.reqif"
    path.write_text(build_reqif(items), encoding="utf-8")
    assert schema_errors(path) == []
    back = load_items(path)
    assert [i.as_dict() for i in back.items] == [i.as_dict() for i in items.items]
    assert back.skipped == []


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "broken.reqif").write_text("<REQ-IF><not closed", encoding="utf-8")
    done = reqstudio("import", "broken.reqif", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("reqstudio: import: broken.reqif is not a ReqIF file")
    assert len(done.stderr.strip().splitlines()) == 1
    missing = reqstudio("import", "nothing.reqif", cwd=tmp_path)
    assert (missing.returncode, missing.stderr.strip()) == (
        2, "reqstudio: import: no such file: nothing.reqif",
    )  # fmt: skip
    (tmp_path / "srs.md").write_text(SRS, encoding="utf-8")
    # the output path is checked before any work
    nowhere = reqstudio("export", "srs.md", "--out", "no/such/dir/x.reqif", cwd=tmp_path)
    assert nowhere.returncode == 2
    assert nowhere.stderr.strip() == "reqstudio: --out: the folder no/such/dir does not exist"


def test_the_commands_stay_lazy(tmp_path):
    # --help loads neither the reqif library nor the checker; a run loads no model client
    from tests.test_cli_lazy_modes import heavy, run_listing_modules

    for command in ("import", "export", "diff"):
        code, modules, _ = run_listing_modules(command, "--help")
        assert code == 0
        assert not {m for m in modules if m.split(".")[0] in ("reqif", "lxml", "xmlschema")}
        assert "reqstudio.check.parse" not in modules
    sample = next(p for p in SAMPLES if p.name == "polarion.reqif")
    code, modules, stderr = run_listing_modules("import", str(sample), "--json")
    assert code == 0, stderr
    assert "reqif.parser" in modules and heavy(modules) == []
