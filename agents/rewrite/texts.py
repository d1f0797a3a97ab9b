"""The engine's progress lines in the user's language ("zh" or "en"). The seed's example
"正在生成第 2/5 节..." is the Chinese form; an English user reads "Writing section 2/5...".
Stage ids (`outline_generation`, ...) stay as they are in both: scripts match them."""

from __future__ import annotations

TEXT: dict[str, dict[str, str]] = {
    "filling": {
        "zh": "正在生成第 {index}/{total} 节...",
        "en": "Writing section {index}/{total}...",
    },
    "reviewing": {"zh": "第 {round} 轮评审中...", "en": "Review round {round}..."},
    "found": {
        "zh": "第 {round} 轮评审：发现 {count} 个问题",
        "en": "Review round {round}: {count} issue(s) found",
    },
    "unplaced": {
        "zh": "第 {round} 轮评审：{count} 个问题无法对应到任何章节，未修订：{which}",
        "en": "Review round {round}: {count} issue(s) name no section and are not patched: {which}",
    },
    "reasking": {
        "zh": "第 {round} 轮评审：{count} 个问题的章节编号无效，请评审专家按有效编号重新指明...",
        "en": "Review round {round}: {count} issue(s) name no valid section id; asking the "
        "reviewer again with the valid ids...",
    },
    "patching": {
        "zh": "第 {round} 轮修订：{count} 节",
        "en": "Review round {round}: patching {count} section(s)",
    },
    "patched": {"zh": "已修订「{title}」", "en": "Patched “{title}”"},
    "patch_failed": {
        "zh": "未能修订「{title}」（{section_id}），该节保持修订前的内容：{reason}",
        "en": "Could not patch “{title}” ({section_id}); it stays as before: {reason}",
    },
    "resumed": {
        "zh": "从保存的进度继续（运行 {run_id}）",
        "en": "Resuming from the saved progress (run {run_id})",
    },
}


def text(key: str, language: str, **values: object) -> str:
    entry = TEXT[key]
    return entry["zh" if language == "zh" else "en"].format(**values)
