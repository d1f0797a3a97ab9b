"""How agents talk in the Agent_Society (seed 004): messages checked against the protocol and
delivered, first contacts, introductions, what the society sends in an agent's name, the
user's task, and the inboxes. `AgentSociety` (reqstudio/modes/team/society.py) holds the members and
contacts this part reads; every refusal is an `Outcome` with an error code, as there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from reqstudio.modes.team.cards import unknown_skill
from reqstudio.modes.team.events import Introduced, MessageDelivered
from reqstudio.modes.team.integrity import LoopWatch, duplicate_of, rename_envelope_keys
from reqstudio.modes.team.members import Agent, Halt, Outcome
from reqstudio.modes.team.protocol import (
    MESSAGE_TYPES,
    ROOT_ID,
    USER_ID,
    ContactEntry,
    IntroductionResponse,
    Message,
    PayloadError,
    TaskBrief,
    first_sentence,
    format_delivery,
    validate_payload,
)

if TYPE_CHECKING:
    from collections.abc import Callable


class Messaging:
    """The message half of `AgentSociety` (its base class): it reads the members and contact
    registries that `AgentSociety` keeps, through its `knows`, `contacts`, `role_name_of`,
    `_add_contact`, `_refuse_unknown_collaborators`, `_no_room`, `_limit`, `refuse` and
    `emit`."""

    agents: dict[str, Agent]
    registries: dict[str, dict[str, ContactEntry]]
    messages: list[Message]
    answer: Message | None
    answers: list[Message]
    halt: Halt | None
    _loops: LoopWatch
    _on_delivery: Callable[[Message], None] | None

    # --- messages (requirements 2.6, 3, 5, 8, 9, 10) -------------------------------------

    def send_message(
        self,
        sender: str,
        to: str,
        message_type: str,
        content: str = "",
        payload: dict[str, Any] | None = None,
        *,
        reason: str | None = None,
    ) -> Outcome:
        tool = "send_message"
        to = (to or "").strip()
        if self.halt is not None:
            return self.refuse(sender, tool, "run_ended", f"the run is ending: {self.halt.detail}")
        if to == sender:
            return self.refuse(
                sender, tool, "self_message", "you cannot send a message to yourself"
            )
        if not self.knows(sender, to):
            known = ", ".join(f"{c.agent_id} ({c.role_name})" for c in self.contacts(sender))
            return self.refuse(
                sender,
                tool,
                "unknown_contact",
                f"'{to}' is not in your contacts, so the message was not sent. Your contacts: {known}. "
                "To reach someone new, send an introduction_request (reason, required_capability) "
                "to a contact who may know them.",
                contacts=[c.agent_id for c in self.contacts(sender)],
            )
        if message_type not in MESSAGE_TYPES:
            return self.refuse(
                sender,
                tool,
                "invalid_message_type",
                f"message_type must be one of: {', '.join(MESSAGE_TYPES)}",
            )
        try:
            checked = validate_payload(message_type, payload)
        except PayloadError as exc:
            return self.refuse(sender, tool, "invalid_payload", str(exc))
        # the sender is the society's to say: envelope keys in a payload are renamed
        body, renamed = rename_envelope_keys(checked.model_dump(exclude_none=True))

        misfit = unknown_skill(self._spec_of(to), body.get("skill"), to)
        if misfit:
            return self.refuse(sender, tool, "unknown_skill", f"not sent: {misfit}")
        if isinstance(checked, IntroductionResponse):
            target = checked.target_id
            if target == to or target not in self.agents:
                return self.refuse(
                    sender,
                    tool,
                    "unknown_target",
                    f"'{target}' is no agent that can be introduced to {to}",
                )
            if not self.knows(sender, target):
                return self.refuse(
                    sender,
                    tool,
                    "unknown_contact",
                    f"you can only introduce agents you know; '{target}' is not in your contacts. "
                    "Ask your own contacts with an introduction_request, then forward their answer.",
                )
            # The introduction carries who the target is and its interface (requirements 3.8, 4.3).
            body.setdefault("role_name", self.role_name_of(target))
            body["role_name"] = body["role_name"] or self.role_name_of(target)
            # the card comes from the society, not from what the introducer wrote
            spec = self.registries[sender][target].interface_spec or self._spec_of(target)
            if spec is not None:
                body["interface_spec"] = spec.model_dump()
            if not body.get("usage_advice"):
                body["usage_advice"] = "按其接口说明发送 collaboration_request，说明你的需要"
        if isinstance(checked, TaskBrief):
            strangers = self._refuse_unknown_collaborators(sender, tool, checked)
            if strangers is not None:
                return strangers

        full = self._no_room(sender, tool)
        if full is not None:
            return full

        first_contact = to != USER_ID and not self.knows(to, sender)
        introduction = None
        if first_contact:
            agent = self.agents[sender]
            why = (reason or "").strip() or f"{message_type}：{first_sentence(content)}"
            introduction = (
                f"我是 {agent.role.name}（{sender}），职责：{agent.role.duties}。联系原因：{why}"
            )
        message = Message(
            id=len(self.messages) + 1,
            sender=sender,
            sender_role=self.role_name_of(sender),
            to=to,
            message_type=message_type,  # type: ignore[arg-type]
            content=content or "",
            payload=body,
            self_introduction=introduction,
        )
        if to == USER_ID and (earlier := duplicate_of(message, self.answers)) is not None:
            return self.refuse(
                sender,
                tool,
                "duplicate_message",
                f"not sent: the user already has this message (message {earlier.id}); "
                "the user hears each answer once",
            )
        self._deliver(message, first_contact=first_contact)
        if first_contact:
            # One-sided acquaintance becomes mutual (requirement 5.2).
            self._add_contact(
                to,
                sender,
                self.role_name_of(sender),
                self._spec_of(sender),
                sender,
                "first_message",
            )
        if isinstance(checked, IntroductionResponse):
            self._introduce(requester=to, target=checked.target_id, introducer=sender)
        if isinstance(checked, TaskBrief) and to != USER_ID:
            self._add_collaborators(sender, to, checked.collaborators)
        self._watch_for_loop(message)
        note = f"message {message.id} delivered to {to}"
        if renamed:
            note += (
                f"; payload key(s) {', '.join(renamed)} renamed payload_<key>: "
                "the society fills in who sent a message"
            )
        return Outcome(True, "sent", note)

    def _introduce(self, requester: str, target: str, introducer: str) -> None:
        if requester == USER_ID or target == requester:
            return
        known = self.registries[introducer][target]
        forwarded_from = known.introduced_by if known.how == "introduction" else None
        if not self.knows(requester, target):
            self._add_contact(
                requester,
                target,
                self.role_name_of(target),
                known.interface_spec or self._spec_of(target),
                introducer,
                "introduction",
            )
        self.emit(
            Introduced(
                requester=requester,
                target=target,
                introducer=introducer,
                forwarded_from=forwarded_from,
            )
        )

    def _deliver(self, message: Message, *, first_contact: bool) -> None:
        self.messages.append(message)
        text = format_delivery(message)
        self.emit(
            MessageDelivered(message=message.as_dict(), text=text, first_contact=first_contact)
        )
        if message.sender in self.agents and self.agents[message.sender].stats:
            self.agents[message.sender].stats.messages_sent += 1  # type: ignore[union-attr]
        if message.to == USER_ID:
            if message.sender == ROOT_ID:
                self.answer = message
                self.answers.append(message)
        else:
            recipient = self.agents[message.to]
            recipient.inbox.append(message)
            if recipient.stats:
                recipient.stats.messages_received += 1
        if self._on_delivery is not None:
            self._on_delivery(message)

    def _watch_for_loop(self, message: Message) -> None:
        detail = self._loops.see(message)
        if detail:
            self._limit("loop", detail)
            self.halt = Halt("loop", detail)

    def report_failure(self, agent_id: str, reason: str) -> None:
        """An agent whose model failed cannot report itself; the society tells its parent in
        its name (marked as such), so the parent can give the work to someone else."""
        agent = self.agents[agent_id]
        if agent.parent is None or self.halt is not None:
            return
        if self._no_room(agent_id, "report_failure") is not None:
            return
        self._report_for(
            agent_id,
            f"（系统代发）{agent_id} 调用模型失败，任务没有完成：{reason}",
            {"status": "blocked"},
        )

    def forward_unsent_words(self, agent_id: str, words: str) -> bool:
        """A child's plain-text words that reached no one go to its parent, marked as
        forwarded; False when not delivered (root, a halt, the limit)."""
        agent = self.agents[agent_id]
        if agent.parent is None or self.halt is not None:
            return False
        if self._no_room(agent_id, "forward_unsent_words") is not None:
            return False
        self._report_for(
            agent_id,
            f"（系统转交）{agent_id} 结束本轮时没有调用 send_message，以下是它的原话：\n{words}",
            {"status": "in_progress", "forwarded_by": "society"},
        )
        return True

    def _report_for(self, agent_id: str, content: str, payload: dict[str, Any]) -> None:
        """A status report to the agent's parent that the society writes in its name."""
        agent = self.agents[agent_id]
        self._deliver(
            Message(
                id=len(self.messages) + 1,
                sender=agent_id,
                sender_role=agent.role.name,
                to=agent.parent,
                message_type="status_report",
                content=content,
                payload=payload,
            ),
            first_contact=False,
        )

    # --- user side ---------------------------------------------------------------------

    def submit_task(self, task: str) -> Message:
        """The user's message to root (the user knows only root, requirement 2.4)."""
        message = Message(
            id=len(self.messages) + 1,
            sender=USER_ID,
            sender_role=None,
            to=ROOT_ID,
            message_type="collaboration_request",
            content=task,
        )
        self._deliver(message, first_contact=False)
        return message

    # --- what an agent sees ------------------------------------------------------------

    def take_inbox(self, agent_id: str) -> list[Message]:
        agent = self.agents[agent_id]
        waiting, agent.inbox = agent.inbox, []
        return waiting

    def read_inbox(self, agent_id: str) -> list[Message]:
        """The waiting messages, left in the inbox until `done_reading` (a turn that fails
        half-way loses nothing)."""
        return list(self.agents[agent_id].inbox)

    def done_reading(self, agent_id: str, read: list[Message]) -> None:
        agent = self.agents[agent_id]
        ids = {m.id for m in read}
        agent.inbox = [m for m in agent.inbox if m.id not in ids]

    def with_inbox(self) -> list[str]:
        return [a.id for a in self.agents.values() if a.inbox]
