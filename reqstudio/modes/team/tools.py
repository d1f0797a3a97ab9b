"""The society's operations as LangChain tools bound to one agent. The society fills `from`;
an agent never names itself. A call with bad arguments gets a readable error back."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reqstudio.answers import describe_problems, tool_arguments, tool_arguments_entry
from reqstudio.modes.team.protocol import USER_ID, MessageType
from reqstudio.modes.team.society import AgentSociety


class BriefArgument(BaseModel):
    """The Task Brief as a tool argument; the society checks the required fields itself, so
    that a missing one is refused with its name rather than a schema error."""

    model_config = ConfigDict(extra="allow")

    objective: str | None = Field(default=None, description="required: what to achieve")
    constraints: list[str] | str | None = Field(
        default=None,
        description="required: every technical/business constraint, stated explicitly",
    )
    inputs: list[str] | str | None = Field(default=None, description="required: what is given")
    outputs: list[str] | str | None = Field(default=None, description="required: deliverables")
    completion_criteria: list[str] | str | None = Field(
        default=None, description="required: how to tell the task is done"
    )
    collaborators: list[dict[str, Any]] | None = Field(
        default=None,
        description="optional: [{agent_id, role_description, collaboration_note, interface_spec}]",
    )
    references: list[str] | str | None = Field(default=None, description="optional")
    priority: str | None = Field(default=None, description="optional: low|normal|high|urgent")
    skill: str | None = Field(
        default=None, description="optional: the skill (id or name) of the role's card it asks for"
    )


class SkillArgument(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: str = Field(description="short id, e.g. glossary")
    name: str = Field(description="what the skill is called")
    description: str | None = None
    examples: list[str] | str | None = Field(default=None, description="example requests")
    input_modes: list[str] | None = Field(default=None, description="e.g. text/plain")
    output_modes: list[str] | None = Field(default=None, description="e.g. text/markdown")


class InterfaceSpecArgument(BaseModel):
    """The interface as seed 004's four fields, or as an A2A agent card (name, description,
    skills with examples, input/output modes), or both; the society checks it."""

    model_config = ConfigDict(extra="allow")

    services: list[str] | str | None = Field(default=None, description="services the role provides")
    input_format: str | None = Field(default=None, description="what a request should contain")
    output_format: str | None = Field(default=None, description="what the role sends back")
    examples: list[str] | str | None = Field(default=None, description="example requests")
    name: str | None = Field(default=None, description="card: the agent's name")
    description: str | None = Field(default=None, description="card: what it does")
    skills: list[SkillArgument] | None = Field(
        default=None, description="card: its skills, each with examples"
    )
    default_input_modes: list[str] | None = Field(default=None, description="e.g. text/plain")
    default_output_modes: list[str] | None = Field(default=None, description="e.g. text/plain")


@tool_arguments("send_message")
class SendMessageArgs(BaseModel):
    to: str = Field(description="the receiver's agent id (must be in your contacts), or 'user'")
    message_type: MessageType
    content: str = Field(default="", description="the message text")
    payload: dict[str, Any] | str | None = Field(
        default=None,
        description="structured fields for the message_type (a Task Brief for task_assignment; "
        "reason + required_capability for introduction_request; target_id, role_name, "
        "interface_spec, usage_advice for introduction_response; status for status_report; "
        "optionally skill: a skill id of the receiver's card)",
    )
    reason: str | None = Field(
        default=None, description="why you contact them (shown on a first contact)"
    )


@tool_arguments("spawn_agent")
class SpawnAgentArgs(BaseModel):
    role: str = Field(description="the name of a role made with create_role")
    brief: BriefArgument | None = Field(default=None, description="the Task Brief (required)")
    role_prompt: str | None = Field(
        default=None, description="only if the role does not exist yet: its role prompt"
    )


@tool_arguments("create_role")
class CreateRoleArgs(BaseModel):
    name: str = Field(description="role name, e.g. 领域分析师")
    role_prompt: str = Field(
        description="what the role does; may say whom to contact for which business (with ids)"
    )
    duties: str | None = Field(default=None, description="one line of duties")
    interface_spec: InterfaceSpecArgument | None = None


@tool_arguments("list_contacts")
class ListContactsArgs(BaseModel):
    """No arguments: `{}` is the call, and anything else is refused, not ignored."""

    model_config = ConfigDict(extra="forbid")


class ArgumentsCheckedTool(StructuredTool):
    """LangChain does not validate the arguments of a tool whose schema has no fields (any
    arguments run it); here they are validated too, so unknown keys are refused like any
    other bad argument (`handle_validation_error` answers the model)."""

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        schema = self.args_schema
        if isinstance(schema, type) and issubclass(schema, BaseModel) and not schema.model_fields:
            schema.model_validate(tool_input)
        return super()._to_args_and_kwargs(tool_input, tool_call_id)


def readable_validation_error(error: ValidationError) -> str:
    return json.dumps(
        {
            "ok": False,
            "error": "invalid_arguments",
            "message": "the tool call's arguments are not valid: "
            + describe_problems(error, limit=20, whole="arguments")
            + ". Fix them and call again.",
        },
        ensure_ascii=False,
    )


def society_tools(society: AgentSociety, agent_id: str) -> list[BaseTool]:
    """The tools one agent has: send_message, create_role, spawn_agent, list_contacts."""

    async def send_message(
        to: str,
        message_type: str,
        content: str = "",
        payload: dict[str, Any] | str | None = None,
        reason: str | None = None,
    ) -> str:
        if isinstance(payload, str):
            try:
                payload = json.loads(payload) if payload.strip() else None
            except json.JSONDecodeError as exc:
                return society.refuse(
                    agent_id, "send_message", "invalid_payload", f"payload is not JSON: {exc}"
                ).text()
        if not (content or "").strip() and (str(to).strip() == USER_ID or not payload):
            # An empty message carries nothing: to the user it would be taken as the answer.
            return society.refuse(
                agent_id,
                "send_message",
                "invalid_arguments",
                "content is empty: a message to the user must say its answer in content, and "
                "one to an agent needs content or a payload. Fix it and call again.",
            ).text()
        return society.send_message(
            agent_id, to, message_type, content, payload, reason=reason
        ).text()

    async def spawn_agent(
        role: str, brief: BriefArgument | None = None, role_prompt: str | None = None
    ) -> str:
        raw = brief.model_dump(exclude_none=True) if brief is not None else None
        return society.spawn_agent(agent_id, role, raw, role_prompt=role_prompt).text()

    async def create_role(
        name: str,
        role_prompt: str,
        duties: str | None = None,
        interface_spec: InterfaceSpecArgument | None = None,
    ) -> str:
        spec = interface_spec.model_dump(exclude_none=True) if interface_spec else None
        return society.create_role(
            agent_id, name, role_prompt, duties=duties, interface_spec=spec
        ).text()

    async def list_contacts() -> str:
        return json.dumps(
            [c.model_dump(exclude_none=True) for c in society.contacts(agent_id)],
            ensure_ascii=False,
        )

    def tool(fn: Any, schema: type[BaseModel], description: str) -> BaseTool:
        tool_arguments_entry(schema)  # every tool's arguments are a registered model
        return ArgumentsCheckedTool.from_function(
            coroutine=fn,
            name=fn.__name__,
            description=description,
            args_schema=schema,
            handle_validation_error=readable_validation_error,
        )

    return [
        tool(
            send_message,
            SendMessageArgs,
            "Send a message to a contact (or root to 'user'). The society fills in `from`.",
        ),
        tool(
            create_role,
            CreateRoleArgs,
            "Define a role (job) with its role prompt and an optional interface_spec.",
        ),
        tool(
            spawn_agent,
            SpawnAgentArgs,
            "Create a child agent in a role. A complete Task Brief is required: objective, "
            "constraints, inputs, outputs, completion_criteria.",
        ),
        tool(list_contacts, ListContactsArgs, "List your contacts and their interface specs."),
    ]
