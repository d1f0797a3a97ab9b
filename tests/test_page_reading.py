"""The page reader of the every-mode walks (tests/page_reading.py) finds what it must: text of
the other language, raw JSON, field names and status codes, and waits with nothing changing on
screen; names, ids and units pass."""

from __future__ import annotations

from tests.page_reading import (
    SilenceWatch,
    TextNode,
    chinese_in_english,
    english_in_chinese,
    findings,
    internals,
)


def test_english_words_in_a_chinese_page_are_found_names_and_ids_pass():
    assert english_in_chinese("审阅结束：没有高优先级问题（quality sufficient）") == [
        "quality",
        "sufficient",
    ]
    assert english_in_chinese("按钮：Rewrite without") == ["without"]
    # the product's and modes' names, ids, files, models and units are not English text
    passing = "已启用 Review 审阅 模式 · FR-01 · sec-02 · improved.md · SmolLM2-135M · 1200 tokens · 3.2 s"
    assert english_in_chinese(passing) == []
    assert english_in_chinese("MCP · get_current_time", {"get_current_time"}) == []


def test_chinese_in_an_english_page_is_found():
    assert chinese_in_english("🐣 根智能体 / root (root) created agent-1") == ["根智能体"]
    assert chinese_in_english("Review finished: no high-priority issue left") == []


def test_raw_json_field_names_and_status_codes_are_internals():
    assert internals('{"round_1": {"improvements_needed": 2}}')
    assert "no_new_high_priority" in internals("停止（no_new_high_priority）")
    assert internals("the ruling: ...}, {")
    assert internals("Root did not answer the user with send_message") == ["send_message"]
    assert internals("MCP · get_current_time", {"get_current_time"}) == []
    # a file name with an underscore is a name, not a field
    assert internals("download improved_partial.md") == []


def test_findings_skip_named_content_and_tool_code():
    nodes = [
        TextNode("UTC time — source 1", "tool", False),
        TextNode('{"timezone": "UTC"}', "tool", True),
        TextNode("完成", "run", False),
    ]
    found = findings(nodes, "zh-CN", content={"UTC time — source 1"}, code_is_content=True)
    assert found == []
    assert findings(nodes[1:], "zh-CN")  # the same JSON counts when code is the app's


def test_words_the_app_quotes_from_the_document_are_the_documents():
    # the offline model wrote an English SRS in a Chinese walk; the checker quotes its terms
    quoted = TextNode("L3 · ISO29148-ambiguous “some additional”", "run", False)
    assert findings([quoted], "zh-CN") == []
    assert findings([TextNode("L3 · 含糊 some “额外”", "run", False)], "zh-CN")  # unquoted


def test_a_wait_is_silent_only_while_nothing_on_screen_changes():
    watch = SilenceWatch()
    for second in range(0, 21):  # a counter that moves every 5 s: never 15 s unchanged
        watch.add(second, f"等待模型回答… {second // 5 * 5} 秒", running=True)
    assert watch.longest_silence()[0] < 15
    frozen = SilenceWatch()
    for second in range(0, 21):
        frozen.add(second, "审阅中…", running=True)
    seconds, shown = frozen.longest_silence()
    assert seconds == 20 and shown == "审阅中…"
    idle = SilenceWatch()
    for second in range(0, 21):  # the run is over: an unchanged page is no wait
        idle.add(second, "✅ 完成", running=False)
    assert idle.longest_silence()[0] == 0


def test_the_catalogue_shows_no_codes_and_its_chinese_no_english():
    """Every message outside the command line's: no field name or status code except in code
    marks (a command or a field the user types), and no English word in the Chinese catalogue
    but names, ids and units (seen on screen: `（quality_sufficient）`, `send_message`)."""
    import re

    from reqstudio import messages

    problems = []
    for code in ("en", "zh"):
        for key, value in messages.catalog(code).items():
            if key.startswith("cli."):
                continue
            said = re.sub(r"`[^`]*`", " ", re.sub(r"\{[^}]*\}", " ", value))
            found = internals(said)
            if code == "zh":
                found += english_in_chinese(said, {"OPENAI_API_KEY"})
            problems += [f"{code} {key}: {found}"] if found else []
    assert not problems, "\n".join(problems)
