"""Tool choice for a function-call model that never calls a tool by itself.

llama.cpp's OpenAI-compatible server (the embedded SmolLM2-135M) ignores the tools when
`tool_choice` is "auto": the model answers in prose and never calls one. It does follow a
forced choice (`tool_choice` naming one function, decoded against a grammar). So the model
still decides, as seed 002 wants, in two forced calls:

1. it names the tool the question needs, or "none", as the one argument of a `choose_tool`
   call whose argument can only be one of the tools' names or "none";
2. for a tool, it writes that tool's arguments in a call forced to that tool.

The grammar keeps the model to the tools there are; the choice stays the model's, and a
135M model often chooses wrongly (measured with 12 questions: the time tool for 3 of 5 time
questions, web search for 2 of 3 search questions, and a tool for 4 of 4 questions needing
none). Every choice is shown in the thinking step, "none" included.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from reqstudio.calls import RetryCallback, RetryPolicy, complete
from reqstudio.prompts import render_prompt

CHOOSE_TOOL = "choose_tool"
NO_TOOL = "none"
PICK_PROMPT = "agent/pick_tool.md"


def choose_tool_schema(tools: Sequence[BaseTool]) -> dict[str, Any]:
    """The `choose_tool` function: its one argument is a tool's name or "none"."""
    return {
        "type": "function",
        "function": {
            "name": CHOOSE_TOOL,
            "description": "Name the tool the user's question needs, or none.",
            "parameters": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "enum": [t.name for t in tools] + [NO_TOOL]}
                },
                "required": ["tool"],
            },
        },
    }


def first_sentence(text: str) -> str:
    words = " ".join((text or "").split())
    return words.split(". ")[0].rstrip(".")


def pick_prompt(tools: Sequence[BaseTool]) -> str:
    """The choice's system prompt: the tools, each by its description's first sentence, and
    "none". (Measured on SmolLM2-135M with 12 questions: with the ReAct prompt's rules, or a
    trailing newline, it named no tool for any question; this short form picks best.)"""
    described = [{"name": t.name, "description": first_sentence(t.description)} for t in tools]
    return render_prompt(PICK_PROMPT, tools=described, no_tool=NO_TOOL).strip()


@dataclass
class ToolPicker:
    """The two forced calls of one function-call model: `choose` names a tool or "none",
    `forced[name]` writes the arguments of that tool."""

    choose: Runnable
    forced: dict[str, Runnable]
    prompt: str

    @classmethod
    def for_model(
        cls,
        model: BaseChatModel,
        tools: Sequence[BaseTool],
        with_role: Callable[[Runnable], Runnable],
    ) -> ToolPicker:
        choose = model.bind_tools([choose_tool_schema(tools)], tool_choice=CHOOSE_TOOL)
        forced = {
            t.name: with_role(model.bind_tools([bounded_schema(t)], tool_choice=t.name))
            for t in tools
        }
        return cls(with_role(choose), forced, pick_prompt(tools))

    async def plan(
        self,
        messages: Sequence[BaseMessage],
        *,
        policy: RetryPolicy,
        on_pick: Callable[[str], None],
        on_retry: RetryCallback | None = None,
    ) -> AIMessage:
        """The model's plan for this round: a message with one tool call, or none (it chose
        no tool). `messages` start with the ReAct system prompt, which the choice does not
        need: it gets the tools' list and "none" instead."""
        messages = plain_messages(messages)
        conversation = [m for m in messages if not isinstance(m, SystemMessage)]
        picked = await complete(
            self.choose,
            [SystemMessage(self.prompt), *conversation],
            policy=policy,
            on_retry=on_retry,
            label="Agent function-call model (tool choice)",
        )
        name = chosen_tool(picked)
        on_pick(name)
        if name not in self.forced:
            return AIMessage(content="")
        message = await complete(
            self.forced[name],
            messages,
            policy=policy,
            on_retry=on_retry,
            label=f"Agent function-call model ({name} arguments)",
        )
        return with_tool_name(message, name)


# A string argument written under a grammar has no end of its own: a small model wrote a
# time zone of 300 characters of chat. Arguments are short (a query, a zone, a name).
ARGUMENT_CHARS = 80


def bounded_schema(tool: BaseTool) -> dict[str, Any]:
    """The tool's function schema with every free string argument bounded in length."""
    schema = convert_to_openai_tool(tool)
    properties = schema["function"].get("parameters", {}).get("properties", {})
    for spec in properties.values():
        free = isinstance(spec, dict) and spec.get("type") == "string"
        if free and not {"enum", "pattern", "maxLength", "format"} & set(spec):
            spec["maxLength"] = ARGUMENT_CHARS
    return schema


def plain_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The conversation with earlier tool calls and results as text: llama.cpp's server
    refuses an assistant message whose content is empty beside its tool calls (HTTP 500), and
    the model's chat template has no place for tool results."""
    plain: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = "; ".join(
                f"{c['name']} {json.dumps(c['args'], ensure_ascii=False)}"
                for c in message.tool_calls
            )
            plain.append(AIMessage(content=f"{message.content or ''}\n{calls}".strip()))
        elif isinstance(message, ToolMessage):
            plain.append(HumanMessage(content=f"{message.name}: {content_text(message)}"))
        else:
            plain.append(message)
    return plain


def content_text(message: BaseMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    return " ".join(
        str(part.get("text", "")) if isinstance(part, dict) else str(part)
        for part in message.content
    )


# llama.cpp's server repeats the function's name in every streamed chunk of a forced call,
# and the chunks are joined: "choose_toolchoose_tool…". The call was forced to one function,
# so its name is known; only its arguments are read from the answer.


def chosen_tool(message: AIMessage) -> str:
    """The tool named in the forced `choose_tool` call ("none" if it names nothing)."""
    for call in message.tool_calls:
        return str((call.get("args") or {}).get("tool") or NO_TOOL)
    return NO_TOOL


def with_tool_name(message: AIMessage, name: str) -> AIMessage:
    """The answer to a call forced to `name`, its tool calls named `name`."""
    calls = [{**call, "name": name} for call in message.tool_calls]
    invalid = [{**call, "name": name} for call in message.invalid_tool_calls]
    return message.model_copy(update={"tool_calls": calls, "invalid_tool_calls": invalid})
