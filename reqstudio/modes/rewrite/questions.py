"""Before a rewrite: clarifications from a JSON list, or from questions the model proposes and
the user answers one at a time (each may be skipped; the user may stop asking)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reqstudio.document_guard import NotADocumentError, fields_problem
from reqstudio.document_model import document_language
from reqstudio.llm import ModelFactory
from reqstudio.modes.rewrite.asking import ask_role
from reqstudio.modes.rewrite.guarded import until_a_document
from reqstudio.modes.rewrite.models import ClarificationItem, ClarifyingQuestions
from reqstudio.prompts import render_prompt


class ClarificationsError(ValueError):
    """A clarifications list that is not a JSON list of {question, answer} objects; the
    message names the entry (1-based) and the field."""


def parse_clarifications(text: str) -> list[ClarificationItem]:
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ClarificationsError(
            f"not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    if not isinstance(data, list):
        raise ClarificationsError(
            "must hold a JSON list of objects with question and answer, "
            f"not a {type(data).__name__}"
        )
    items = []
    for number, entry in enumerate(data, start=1):
        if not isinstance(entry, dict):
            raise ClarificationsError(
                f"entry {number} must be an object with question and answer, "
                f"not a {type(entry).__name__}"
            )
        for name in ("question", "answer"):
            if name not in entry:
                raise ClarificationsError(f"entry {number}: field '{name}' is missing")
            if not isinstance(entry[name], str):
                raise ClarificationsError(
                    f"entry {number}: field '{name}' must be a string, "
                    f"not {type(entry[name]).__name__}"
                )
        if not entry["question"].strip():
            raise ClarificationsError(f"entry {number}: field 'question' is empty")
        items.append(ClarificationItem(question=entry["question"], answer=entry["answer"]))
    return items


async def propose_questions(
    original_content: str,
    factory: ModelFactory,
    *,
    max_questions: int,
    callbacks: Sequence[Any] = (),
) -> list[str]:
    """Up to `max_questions` clarifying questions about the original's gaps and ambiguities,
    in the original's language."""
    if max_questions <= 0:
        return []
    language = document_language(original_content)
    prompt = render_prompt(
        f"rewrite/{language}/questions.md",
        original_content=original_content.strip(),
        max_questions=max_questions,
    )
    template = f"rewrite/{language}/questions.md"

    async def ask() -> list[str]:
        answer = await ask_role(
            factory,
            "RewriteQuestions",
            prompt,
            ClarifyingQuestions,
            callbacks=callbacks,
            label="RewriteQuestions",
        )
        questions = [q.strip() for q in answer.value.questions if q and q.strip()]
        # "First question", "问题一": the prompt's example given back, not questions
        problem = fields_problem(questions, [template]) if questions else None
        if problem is not None:
            raise NotADocumentError(problem, "RewriteQuestions")
        return questions

    questions = await until_a_document(
        "RewriteQuestions", factory.settings, "RewriteQuestions questions", ask
    )
    return list(dict.fromkeys(questions))[:max_questions]


@dataclass(frozen=True)
class Reply:
    """The user's reaction to one question."""

    action: Literal["answer", "skip", "stop"]
    text: str = ""


@dataclass
class QuestionRound:
    clarifications: list[ClarificationItem] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    not_asked: list[str] = field(default_factory=list)  # after the user stopped asking


AskOne = Callable[[int, int, str], Awaitable[Reply]]


async def ask_one_at_a_time(questions: Sequence[str], ask: AskOne) -> QuestionRound:
    """Ask each question in turn through `ask(index, total, question)`; an empty answer counts
    as skipped; "stop" leaves the remaining questions unasked."""
    outcome = QuestionRound()
    for index, question in enumerate(questions, start=1):
        reply = await ask(index, len(questions), question)
        if reply.action == "stop":
            outcome.not_asked = list(questions[index - 1 :])
            break
        if reply.action == "skip" or not reply.text.strip():
            outcome.skipped.append(question)
            continue
        outcome.clarifications.append(ClarificationItem(question=question, answer=reply.text))
    return outcome
