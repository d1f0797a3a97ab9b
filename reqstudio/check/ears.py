"""Which EARS template a requirement follows (Mavin et al., "Easy Approach to Requirements
Syntax", RE 2009): ubiquitous, event-driven (WHEN), state-driven (WHILE), optional feature
(WHERE), unwanted behaviour (IF ... THEN), complex (several of these), or none.

Chinese patterns: 当……时 (event), 在……时/期间/状态下/模式下 (state), 在包含/具备/配备……的情况下
(optional), 如果/若……那么/则 (unwanted), "<系统>应……" (ubiquitous); a condition after the
binding word ("应在……后") follows none, as in English."""

from __future__ import annotations

import re

from reqstudio.check.patterns import BINDING_EN, BINDING_ZH

TEMPLATES = ("ubiquitous", "event-driven", "state-driven", "optional", "unwanted", "complex")

_CLAUSE_EN = re.compile(r"(?:^|[,;]\s*)(when|while|where|if|during)\b", re.IGNORECASE)
_KIND_EN = {
    "when": "event-driven",
    "while": "state-driven",
    "during": "state-driven",
    "where": "optional",
    "if": "unwanted",
}
_TRAILING_CONDITION_EN = re.compile(r"\b(?:when|whenever|while|if|once|during|unless)\b", re.I)
_SECOND_SENTENCE = re.compile(r"[.;]\s+\S")
_SUBJECT_EN = re.compile(r"^(?:the|an?|each)?\s*[\w’'.\- ]{1,60}?$", re.IGNORECASE)

_OPTIONAL_ZH = re.compile(
    r"^(?:在|若|如果)?(?:系统)?(?:包含|具备|启用|配置了?|配备|安装了?|提供|支持)[^，,。]*(?:的情况下|时)"
)
_UNWANTED_ZH = re.compile(r"^(?:如果|若|假如|一旦)[^。]*?[，,]\s*(?:那么|则)")
_EVENT_ZH = re.compile(r"^当[^。]*?时")
_STATE_ZH = re.compile(r"^(?:在|处于)[^。]*?(?:时|期间|状态下|模式下|过程中)")
# a condition after the binding word ("应在插入车票后开闸"), not a bound ("应在 2 秒内"): none
_TRAILING_CONDITION_ZH = re.compile(r"^(?:在|当)[^，,。\d]*?(?:时|后|期间|之前|以前)")
_CLAUSE_ZH = re.compile(r"(?:^|[，,；;])\s*(当|在|如果|若|处于)")


def ears_template(text: str, language: str = "en") -> str | None:
    """The template `text` follows, or None."""
    text = text.strip().lstrip("*").strip()
    if language == "zh":
        return _template_zh(text)
    # one binding word: EARS writes "shall"; a document that binds with "must" is read alike
    shalls = list(BINDING_EN.finditer(text))
    if len(shalls) != 1:
        return None
    shall = shalls[0]
    before = text[: shall.start()].strip()
    if _TRAILING_CONDITION_EN.search(text[shall.end() :]) or _SECOND_SENTENCE.search(text):
        return None  # a condition after the response, or a second statement: not a template
    kinds = [_KIND_EN[m.group(1).lower()] for m in _CLAUSE_EN.finditer(before)]
    if not kinds:
        return "ubiquitous" if _SUBJECT_EN.match(before) and before else None
    if len(set(kinds)) > 1:
        return "complex"
    kind = kinds[0]
    if kind == "unwanted" and not re.search(r"\bthen\b", before, re.IGNORECASE):
        return None
    # the condition ends with a comma and a subject: "When X, the system shall"
    if "," not in before:
        return None
    return kind


def _template_zh(text: str) -> str | None:
    shalls = list(BINDING_ZH.finditer(text))
    if len(shalls) != 1:
        return None
    before = text[: shalls[0].start()]
    if _TRAILING_CONDITION_ZH.match(text[shalls[0].end() :].lstrip()):
        return None
    kinds = []
    if _UNWANTED_ZH.match(before):
        kinds.append("unwanted")
    elif _OPTIONAL_ZH.match(before):
        kinds.append("optional")
    elif _EVENT_ZH.match(before):
        kinds.append("event-driven")
    elif _STATE_ZH.match(before):
        kinds.append("state-driven")
    if kinds and len(_CLAUSE_ZH.findall(before)) > 1:
        return "complex"
    if kinds:
        return kinds[0]
    if re.search(r"[，,]", before) or len(before) > 30 or not before:
        return None
    return "ubiquitous"
