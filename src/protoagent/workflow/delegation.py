"""Delegation generated from member definitions: one ``delegate_<name>`` tool and one worker
card per member, so adding a member file gives its lead a new delegate without a code change."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from protoagent.agents.compile import EffectiveAgent
from protoagent.agents.profiles import SPECIALISED_MEMBERS
from protoagent.hooks.compact_protocol import WorkerCard
from protoagent.tools.base import AnyTool, Prepared, Tool, ToolContext, ToolMetadata, ToolOutput

DELEGATE_PREFIX = "delegate_"


class DelegateArgs(BaseModel):
    task: str = Field(min_length=1, description="one focused assignment for this member")


def delegate_name(member: str) -> str:
    return DELEGATE_PREFIX + member.replace("-", "_")


class DelegateTool(Tool[DelegateArgs]):
    """Runs one member on an assignment inside the run's session, approvals and budget."""

    name = "delegate"
    description = "Delegate an assignment to a team member."
    input_model = DelegateArgs
    member: EffectiveAgent

    def prepare(self, args: DelegateArgs, ctx: ToolContext) -> Prepared:
        from protoagent.workflow.workers import runner_of

        runner_of(ctx)
        return Prepared(preview=f"{self.member.name}: {args.task}", effect="none", state=args.task)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        from protoagent.workflow.workers import runner_of

        text = await runner_of(ctx).run_member(self.member, str(prepared.state))
        return ToolOutput(
            f"advice, not evidence:\n{text}", data={"member": self.member.name, "advice": self.member.name}
        )


def member_tool(member: EffectiveAgent, lead: str) -> AnyTool:
    """A tool class made from the member's own name and description."""
    attributes = {
        "name": delegate_name(member.name),
        "description": f"Delegate to {member.name}: {member.description or 'a team member'}.",
        "metadata": ToolMetadata(effect="none", observation="exact", roles=frozenset({lead})),
        "member": member,
    }
    cls = type(f"Delegate_{member.name.replace('-', '_')}", (DelegateTool,), attributes)
    tool: AnyTool = cls()
    return tool


def delegate_tools(members: Sequence[EffectiveAgent], lead: str) -> list[AnyTool]:
    """Generated delegate tools for members the workflow does not run through its own tools."""
    return [member_tool(m, lead) for m in members if not specialised(m)]


def specialised(member: EffectiveAgent) -> bool:
    """Coder and Tester run through the workflow's own ``coder``/``tester`` tools."""
    return member.mode == "coding" and member.name in SPECIALISED_MEMBERS


def worker_cards(members: Sequence[EffectiveAgent]) -> tuple[WorkerCard, ...]:
    """The compact routing cards, one per member, from its name and description."""
    cards = []
    for member in members:
        tool = member.name if specialised(member) else delegate_name(member.name)
        cards.append(WorkerCard(tool, "task", member.description or member.name))
    return tuple(cards)
