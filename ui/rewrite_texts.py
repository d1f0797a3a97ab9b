"""Rewrite mode's UI strings, Chinese and English, by key."""

from __future__ import annotations

from ui.texts import Catalog

TEXT = {
    "intro": {
        "zh": "请上传要重写的原始文档（.md / .txt / .pdf / .docx），也可以直接粘贴文档内容。"
        "可同时附上澄清问答 .json（由 question 和 answer 组成的列表）；没有的话，我可以先就文档"
        "中的空白和含糊之处向你提问。",
        "en": "Upload the original document to rewrite (.md / .txt / .pdf / .docx), or paste "
        "its text. You may attach a clarifications .json too (a list of question and answer "
        "objects); without one, I can first ask you about the document's gaps and ambiguities.",
    },
    "need_original": {
        "zh": "还没有原始文档：请上传文件，或粘贴文档内容。",
        "en": "No original document yet: upload a file or paste the document's text.",
    },
    "original_ok": {
        "zh": "已读取原始文档《{name}》：{chars} 个字符。",
        "en": "Original document “{name}” read: {chars} characters.",
    },
    "clarifications_ok": {
        "zh": "已读取澄清问答《{name}》：{count} 条。",
        "en": "Clarifications “{name}” read: {count} entries.",
    },
    "clarifications_bad": {
        "zh": "⚠️ 澄清文件《{name}》无法使用：{reason}。需要一个 JSON 列表，每项含 question 和 "
        "answer 两个字符串字段。",
        "en": "⚠️ The clarifications file “{name}” cannot be used: {reason}. It must be a JSON "
        "list whose entries each have the string fields question and answer.",
    },
    "how_clarify": {
        "zh": "重写前先澄清文档中的空白和含糊之处。你希望怎么做？",
        "en": "Before rewriting, the document's gaps and ambiguities should be clarified. How?",
    },
    "let_app_ask": {"zh": "请向我提问", "en": "Ask me questions"},
    "upload_json": {"zh": "上传澄清 .json", "en": "Upload a clarifications .json"},
    "no_clarify": {"zh": "不澄清，直接重写", "en": "Rewrite without"},
    "upload_json_prompt": {
        "zh": "请上传澄清问答 .json（question / answer 列表）。",
        "en": "Upload the clarifications .json (a list of question / answer objects).",
    },
    "proposing": {"zh": "正在阅读文档并拟定澄清问题…", "en": "Reading the document for questions…"},
    "no_questions": {
        "zh": "没有需要澄清的问题，直接开始重写。",
        "en": "No question needed; rewriting now.",
    },
    "questions_failed": {
        "zh": "⚠️ 未能拟定澄清问题：{reason} 将不带澄清直接重写。",
        "en": "⚠️ Could not draft clarifying questions: {reason} Rewriting without them.",
    },
    "question": {
        "zh": "**问题 {index}/{total}**：{question}",
        "en": "**Question {index}/{total}**: {question}",
    },
    "answer_or_skip": {
        "zh": "回答这个问题、跳过，还是不再提问？",
        "en": "Answer this question, skip it, or stop asking?",
    },
    "answer": {"zh": "回答", "en": "Answer"},
    "chosen": {"zh": "已选择：{label}", "en": "Chosen: {label}"},
    "timed_out": {"zh": "等待超时，未作选择。", "en": "Timed out; nothing was chosen."},
    "skip": {"zh": "跳过", "en": "Skip"},
    "stop_asking": {"zh": "不再提问，开始重写", "en": "Stop asking, rewrite"},
    "your_answer": {
        "zh": "请输入你对问题 {index} 的回答：",
        "en": "Type your answer to question {index}:",
    },
    "qa_summary": {
        "zh": "收集到 {answered} 条回答，跳过 {skipped} 个问题，未提问 {unasked} 个。",
        "en": "{answered} answered, {skipped} skipped, {unasked} not asked.",
    },
    "step_outline": {"zh": "① 大纲规划", "en": "① Outline"},
    "step_filling": {"zh": "② 逐节撰写", "en": "② Sections"},
    "step_review": {"zh": "③ 评审 · 第 {round} 轮", "en": "③ Review · round {round}"},
    "step_review_off": {"zh": "③ 评审（已关闭）", "en": "③ Review (off)"},
    "outline_head": {
        "zh": "**{title}**\n\n| # | 标题 | 写作目标 | 层级 |\n|---|---|---|---|",
        "en": "**{title}**\n\n| # | Title | Goal | Level |\n|---|---|---|---|",
    },
    "filling": {
        "zh": "正在生成第 {index}/{total} 节：{title}",
        "en": "Writing section {index}/{total}: {title}",
    },
    "filled": {"zh": "已写完 {total} 节。", "en": "{total} sections written."},
    "reviewing": {"zh": "评审中…", "en": "Reviewing…"},
    "no_issues": {"zh": "✅ 没有发现问题。", "en": "✅ No issues found."},
    "issues_head": {
        "zh": "发现 {count} 个问题：\n\n| 章节 | 类型 | 问题 | 建议 |\n|---|---|---|---|",
        "en": "{count} issues found:\n\n| Section | Kind | Issue | Suggestion |\n|---|---|---|---|",
    },
    "patched": {"zh": "修订「{title}」", "en": "Patched “{title}”"},
    "last_round": {
        "zh": "已达到评审轮数上限（{limit}），不再复审。",
        "en": "Review round limit ({limit}) reached; no further review.",
    },
    "summary": {
        "zh": "✅ 重写完成：{sections} 节 · 评审 {rounds} 轮 · 修复问题 {fixed} 个 · {tokens} tokens · "
        "{seconds:.1f} 秒",
        "en": "✅ Rewrite done: {sections} sections · {rounds} review rounds · {fixed} issues "
        "fixed · {tokens} tokens · {seconds:.1f} s",
    },
    "failed": {
        "zh": "⚠️ 重写在「{stage}」阶段失败{where}：{reason}已写的内容已保留。",
        "en": "⚠️ The rewrite failed in stage “{stage}”{where}: {reason} What was written is kept.",
    },
    "where": {"zh": "，章节 {section_id}「{title}」", "en": " at section {section_id} “{title}”"},
    "stage_review": {"zh": "③ 评审", "en": "③ Review"},
    "stopped": {
        "zh": "⏹ 已停止。已写的内容已保留。",
        "en": "⏹ Stopped. What was written is kept.",
    },
    "stage_failed": {
        "zh": "⚠️ 本阶段失败{where}：{reason}",
        "en": "⚠️ This stage failed{where}: {reason}",
    },
    "patch_failed": {
        "zh": "⚠️ 未能修订「{title}」（{section_id}），该节保持修订前的内容：{reason}",
        "en": "⚠️ Could not patch “{title}” ({section_id}); it stays as before: {reason}",
    },
    "unplaced": {
        "zh": "⚠️ {count} 个问题无法对应到任何章节，未修订：{which}",
        "en": "⚠️ {count} issue(s) name no section and are not patched: {which}",
    },
    "incomplete": {
        "zh": "⚠️ 重写未完全完成：以下章节未能修订，保持初稿内容：{sections}。{sections_count} 节 · "
        "评审 {rounds} 轮 · 修复问题 {fixed} 个 · {tokens} tokens · {seconds:.1f} 秒",
        "en": "⚠️ Rewrite incomplete: these sections could not be patched and stay as drafted: "
        "{sections}. {sections_count} sections · {rounds} review rounds · {fixed} issues fixed · "
        "{tokens} tokens · {seconds:.1f} s",
    },
    "too_large": {
        "zh": "⚠️ 文档太大，模型上下文放不下，未开始重写：{sizes}。",
        "en": "⚠️ The document is too large for the model's context; nothing was started: {sizes}.",
    },
    "may_not_fit": {
        "zh": "⚠️ 评审与修订请求可能超出模型上下文（{sizes}），模型服务可能拒绝。",
        "en": "⚠️ The review and patch requests may not fit the model's context ({sizes}); the "
        "provider may refuse them.",
    },
    "resume": {"zh": "继续重写", "en": "Resume the rewrite"},
    "nothing_to_resume": {
        "zh": "没有可以继续的重写：它已经完成，或保存的进度已不存在。",
        "en": "There is no rewrite to resume: it finished, or its saved progress is gone.",
    },
    "resume_offer": {
        "zh": "上次的重写没有完成，已完成的步骤已保存。要从那里继续吗？",
        "en": "The last rewrite did not finish; its finished steps are saved. Resume from there?",
    },
}

tr = Catalog(TEXT)
