"""Uploaded requirements and reference documents: each accepted type, each refusal."""

from __future__ import annotations

from pathlib import Path

import pytest

from reqstudio.modes.srs.documents import ReferenceDocumentError, load_reference
from tests.test_srs_support import CHINESE_TEXT, UPLOADS, write_upload_fixtures


@pytest.fixture(scope="module")
def uploads(tmp_path_factory) -> dict[str, Path]:
    """Fresh copies, so the tests check the generator too; the committed copies in
    tests/data/srs/uploads are the same bytes, for browser tests."""
    return write_upload_fixtures(tmp_path_factory.mktemp("uploads"))


def test_committed_upload_fixtures_match_the_generator(uploads):
    for name, path in uploads.items():
        committed = UPLOADS / name
        assert committed.is_file(), f"missing {committed}: run python -m tests.test_srs_support"
        if not name.endswith((".pdf", ".docx")):  # those embed ids and timestamps
            assert committed.read_bytes() == path.read_bytes()


@pytest.mark.parametrize(
    ("name", "kind", "encoding"),
    [
        ("reference-utf8.md", "markdown", "utf-8"),
        ("reference-utf8-bom.md", "markdown", "utf-8-sig"),
        ("reference-gbk.txt", "text", "gb18030"),
        ("reference-utf16.txt", "text", "utf-16"),
    ],
)
def test_text_files_in_each_encoding_read_as_the_same_chinese_text(uploads, name, kind, encoding):
    document = load_reference(uploads[name])
    assert (document.name, document.kind, document.encoding) == (name, kind, encoding)
    assert "信用卡号码只显示最后四位。" in document.text
    assert "\ufeff" not in document.text
    assert document.text.startswith(("# E-Store", CHINESE_TEXT.splitlines()[0]))


def test_pdf_text_layer_is_read(uploads):
    document = load_reference(uploads["reference.pdf"])
    assert document.kind == "pdf"
    assert "confirm each order by e-mail within 5 minutes" in document.text


def test_docx_paragraphs_headings_and_tables_are_read(uploads):
    document = load_reference(uploads["reference.docx"])
    assert document.kind == "docx"
    assert document.text.startswith("# E-Store reference")
    assert "within 5 minutes" in document.text
    assert "用户可以注册账户并登录系统" in document.text
    assert "| NFR-01 | 99.999% availability |" in document.text


def test_the_given_name_decides_the_type(uploads, tmp_path):
    stored = tmp_path / "upload-3f2a"  # how an upload may be stored: no extension
    stored.write_bytes(uploads["reference-utf8.md"].read_bytes())
    document = load_reference(stored, name="My Reference.MD")
    assert (document.name, document.kind) == ("My Reference.MD", "markdown")


def test_real_case_documents_load():
    from tests.test_srs_support import E_STORE

    document = load_reference(E_STORE / "reference.md")
    assert "E-Store" in document.text and document.encoding == "utf-8"


@pytest.mark.parametrize(
    ("name", "code", "english", "chinese"),
    [
        ("empty.md", "empty", "empty", "为空"),
        ("blank.txt", "empty", "no text", "没有文字"),
        ("binary.txt", "binary", "not text", "不是文本"),
        ("corrupt.pdf", "pdf_unreadable", "could not be read", "无法读取"),
        ("encrypted.pdf", "pdf_encrypted", "password", "密码"),
        ("scanned.pdf", "pdf_no_text", "no extractable text", "没有可提取的文字"),
        ("corrupt.docx", "docx_unreadable", "could not be read", "无法读取"),
        ("reference.xlsx", "unsupported_type", ".xlsx is not supported", "不支持的文件类型"),
    ],
)
def test_refusals_say_what_is_wrong_and_what_is_allowed(uploads, name, code, english, chinese):
    with pytest.raises(ReferenceDocumentError) as caught:
        load_reference(uploads[name])
    error = caught.value
    assert error.code == code
    assert english in error.message("en") and name in error.message("en")
    assert "Accepted: .md, .txt, .pdf, .docx" in error.message("en") and "10 MB" in error.message(
        "en"
    )
    assert chinese in error.message("zh") and "10 MB" in error.message("zh")
    assert str(error) == error.message("en")
    assert error.message("zh-CN") == error.message("zh")


def test_over_the_size_limit_is_refused_before_reading(uploads):
    with pytest.raises(ReferenceDocumentError) as caught:
        load_reference(uploads["reference-gbk.txt"], max_mb=0.0001)
    assert caught.value.code == "too_large"
    assert "over the 0.0001 MB limit" in caught.value.message("en")
    assert "超过 0.0001 MB" in caught.value.message("zh")


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(ReferenceDocumentError) as caught:
        load_reference(tmp_path / "nowhere.md")
    assert caught.value.code == "not_found"


async def test_uploads_are_parsed_off_the_event_loop(monkeypatch, settings):
    """pypdf, python-docx and charset detection are CPU-bound; the browser adapter and the
    experiment runner read documents in a worker thread so other sessions keep streaming."""
    import threading

    import reqstudio.modes.srs.experiment as experiment
    import reqstudio.web.session
    import reqstudio.web.srs.reference
    from reqstudio.runtime import AppRuntime

    readers: list[int] = []

    def reading(*args, **kwargs):
        readers.append(threading.get_ident())
        return load_reference(*args, **kwargs)

    monkeypatch.setattr(reqstudio.web.srs.reference, "load_reference", reading)
    monkeypatch.setattr(experiment, "load_reference", reading)
    runtime = AppRuntime(settings)
    monkeypatch.setattr(reqstudio.web.session, "_runtime", runtime)
    document = await reqstudio.web.srs.reference.read_document(
        UPLOADS / "reference.pdf", "reference.pdf"
    )
    assert "confirm each order" in document.text
    case = experiment.ExperimentCase("e-store", UPLOADS / "empty.md", UPLOADS / "empty.md")
    from reqstudio.llm import ModelFactory, endpoint_from_settings

    factory = ModelFactory(settings, endpoint_from_settings(settings))  # no call is made
    row = await experiment.run_case(case, "none", factory=factory)
    assert row["status"] == "failed" and "empty" in row["error"]
    assert readers and threading.get_ident() not in readers
