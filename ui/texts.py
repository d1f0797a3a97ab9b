"""The app's own UI strings in Chinese and English (Chainlit's translations cover its chrome)."""

from __future__ import annotations

import chainlit as cl

TEXTS: dict[str, dict[str, str]] = {
    "regenerate": {"zh": "重新生成", "en": "Regenerate"},
    "regenerate_unknown": {
        "zh": "⚠️ 找不到这条回答对应的问题，无法重新生成。",
        "en": "⚠️ The question of this answer is not found: it cannot be regenerated.",
    },
    "mode_on": {
        "zh": "已启用 **{mode}** 模式。{description}",
        "en": "**{mode}** mode is on. {description}",
    },
    "embedded_notice": {
        "zh": (
            "ℹ️ 当前由内置的离线小模型 **SmolLM2-135M** 回答：它只用于演示，回答常常不准确。\n"
            "要使用真实模型，请设置 `OPENAI_API_KEY`（可选 `OPENAI_BASE_URL`、`OPENAI_MODEL`，"
            "支持 OpenAI、DeepSeek、通义千问、Ollama、vLLM、llama.cpp）后重启应用。"
        ),
        "en": (
            "ℹ️ A small offline demo model (**SmolLM2-135M**) is answering: it is for trying the "
            "app out and is often wrong.\nTo use a real model, set `OPENAI_API_KEY` (and optionally "
            "`OPENAI_BASE_URL`, `OPENAI_MODEL`: OpenAI, DeepSeek, Qwen, Ollama, vLLM, llama.cpp) "
            "and restart the app."
        ),
    },
    "no_model": {
        "zh": "⚠️ 当前没有可用的模型：{problem}。请设置 `OPENAI_API_KEY`（可选 "
        "`OPENAI_BASE_URL`、`OPENAI_MODEL`）后重启应用。",
        "en": "⚠️ No model is available: {problem}. Set `OPENAI_API_KEY` (and optionally "
        "`OPENAI_BASE_URL`, `OPENAI_MODEL`) and restart the app.",
    },
    "stats": {
        "zh": "{tokens} tokens（输入 {input} / 输出 {output}）· {seconds:.1f} 秒",
        "en": "{tokens} tokens ({input} in / {output} out) · {seconds:.1f} s",
    },
    "stats_no_usage": {
        "zh": "tokens 未知（模型服务未返回用量）· {seconds:.1f} 秒",
        "en": "tokens unknown (the provider sent no usage) · {seconds:.1f} s",
    },
    "retrying": {
        "zh": "⟳ 回答中途中断，正在重试（第 {attempt} 次尝试）…",
        "en": "⟳ The answer broke off; trying again (try {attempt})…",
    },
    "stopped": {"zh": "⏹ 已停止生成，已保留收到的内容。", "en": "⏹ Stopped; what arrived is kept."},
    "truncated": {
        "zh": "（内置离线模型的回答上限为 {tokens} tokens，回答在此处截断。）",
        "en": "(truncated at {tokens} tokens, the offline model's limit per answer)",
    },
    "failed_kept": {
        "zh": "⚠️ {reason} 已保留收到的内容，可以重新发送。",
        "en": "⚠️ {reason} What arrived is kept; you can send again.",
    },
    "history_unavailable": {
        "zh": "⚠️ 历史记录数据库暂时无法访问，本轮对话没有保存到历史记录。可以继续对话；"
        "数据库恢复后，新的对话会照常保存，之前已保存的记录不受影响。",
        "en": "⚠️ The history database cannot be reached right now, so this turn was not saved "
        "to the history. You can keep talking; once the database is back, new turns are saved "
        "again, and nothing saved before is lost.",
    },
    "empty_message": {
        "zh": "消息是空的，请输入内容后再发送。",
        "en": "The message is empty; type something and send again.",
    },
}


def lang() -> str:
    """'zh' or 'en', from the browser's language."""
    try:
        language = cl.context.session.language or "en-US"
    except Exception:
        language = "en-US"
    return "zh" if language.lower().startswith("zh") else "en"


def counted(number: int, noun: str, plural: str | None = None, zh_unit: str = "") -> str:
    """`1 round`, `2 rounds` in English; in Chinese the number and `zh_unit` (no plural)."""
    if lang() == "zh":
        return f"{number} {zh_unit}".strip()
    return f"{number} {noun if number == 1 else plural or noun + 's'}"


class Catalog:
    """UI strings by key and language: `tr = Catalog({...}); tr("key", name=...)`."""

    def __init__(self, texts: dict[str, dict[str, str]]):
        self.texts = texts

    def __call__(self, key: str, **values: object) -> str:
        return self.texts[key][lang()].format(**values)


t = Catalog(TEXTS)
