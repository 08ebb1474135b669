"""One delegation path: every member a lead may hand an assignment to gets one generated tool.

The built-in workers (``coder``, ``tester``, ``explorer``) and the members of agent files
(``delegate_<name>``, so adding a member file gives its lead a new delegate without a code
change) are made by the same factory from a ``Delegation``; each call runs the member as an
owned child of the run (``WorkerRunner``: its session, approvals and budget). What a member
answers is advice or pointers to source, never evidence; only Coder's edits change files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from pydantic import BaseModel, Field

from protoagent.agents.compile import EffectiveAgent
from protoagent.agents.profiles import ARCHITECT, CODER, EXPLORER, SPECIALISED_MEMBERS, TESTER
from protoagent.errors import ToolRejected
from protoagent.hooks.compact_protocol import WorkerCard
from protoagent.tools.base import AnyTool, Observation, Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workflow.reports import render_changes, render_report
from protoagent.workflow.task import WorkerReport
from protoagent.workflow.workers import runner_of

DELEGATE_PREFIX = "delegate_"


class AssignmentArgs(BaseModel):
    task: str = Field(min_length=1)


class DelegateArgs(AssignmentArgs):
    task: str = Field(min_length=1, description="one focused assignment for this member")


@dataclass(frozen=True, slots=True)
class Delegation:
    """How a lead hands one member an assignment: the tool the lead sees and how it runs."""

    member: str
    """The member's name (its agent in the log)."""
    tool: str
    """The tool's name: the member's own for a built-in worker, ``delegate_<name>`` otherwise."""
    description: str
    input_model: type[AssignmentArgs]
    lead: str = ARCHITECT
    """The one agent the tool is offered to (``ToolMetadata.roles``)."""
    observation: Observation = "exact"
    absent: str = ""
    """Why the call is refused when the member is not in the lead's team (empty: not checked)."""
    agent: EffectiveAgent | None = None
    """An agent file's member as compiled for this run (``None``: the run's own member of that name)."""


BUILTIN_DELEGATIONS = (
    Delegation(CODER, CODER, "Coder applies one focused edit assignment now.", AssignmentArgs),
    Delegation(TESTER, TESTER, "Read-only Tester designs regression cases.", AssignmentArgs, observation="projectable"),
    Delegation(
        EXPLORER,
        EXPLORER,
        "Read-only Explorer finds the relevant paths and lines.",
        AssignmentArgs,
        absent="Explorer is not a member of this lead's team (turned off?); read the source yourself "
        "with read_file, list_directory and search_regex",
    ),
)
"""The workflow's own workers; a run offers each only when its member is in the lead's team."""


class DelegateTool(Tool[AssignmentArgs]):
    """Runs one member on an assignment inside the run's session, approvals and budget."""

    name = "delegate"
    description = "Delegate an assignment to a team member."
    input_model = AssignmentArgs
    delegation: ClassVar[Delegation]

    def prepare(self, args: AssignmentArgs, ctx: ToolContext) -> Prepared:
        runner = runner_of(ctx)
        delegation = self.delegation
        if delegation.absent and delegation.member not in runner.members:
            raise ToolRejected(delegation.absent, kind=f"no_{delegation.member}")
        builtin = delegation.tool == delegation.member
        preview = args.task if builtin else f"{delegation.member}: {args.task}"
        return Prepared(preview=preview, effect="none", state=args.task)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        return await _answer(self.delegation, str(prepared.state), ctx)


async def _answer(delegation: Delegation, task: str, ctx: ToolContext) -> ToolOutput:
    runner = runner_of(ctx)
    match delegation.tool:
        case "coder":
            outcome = await runner.run_coder(task)
            report = WorkerReport(CODER, outcome.status, outcome.summary, outcome.missing_paths, outcome.reason)
            changes = [
                {"path": c.path, "revision": c.revision, "lines_added": c.added, "lines_removed": c.removed}
                for c in outcome.changes
            ]
            data = {
                "status": outcome.status,
                "reason": outcome.reason,
                "summary": outcome.summary,
                "missing_paths": list(outcome.missing_paths),
                "changed_files": list(outcome.changed_files),
                "changes": changes,
                "windows": outcome.windows,
            }
            return ToolOutput(render_report(CODER, report, "") + "\n" + render_changes(outcome.changes), data=data)
        case "tester":
            advice = await runner.run_tester(task)
            return ToolOutput(f"advice, not evidence:\n{advice}", data={"advice": TESTER})
        case "explorer":
            found = await runner.run_member(runner.members[EXPLORER], task)
            text = f"findings (read-only discovery; pointers to source, not evidence):\n{found}"
            return ToolOutput(text, data={"advice": EXPLORER})
        case _:
            member = delegation.agent or runner.members[delegation.member]
            text = await runner.run_member(member, task)
            name = member.name
            return ToolOutput(f"advice, not evidence:\n{text}", data={"member": name, "advice": name})


def delegate_tool(delegation: Delegation) -> type[DelegateTool]:
    """The tool class of one delegation."""
    attributes = {
        "name": delegation.tool,
        "description": delegation.description,
        "input_model": delegation.input_model,
        "metadata": ToolMetadata(effect="none", observation=delegation.observation, roles=frozenset({delegation.lead})),
        "delegation": delegation,
    }
    return type(f"Delegate_{delegation.tool}", (DelegateTool,), attributes)


BUILTIN_DELEGATE_TOOLS = tuple(delegate_tool(d) for d in BUILTIN_DELEGATIONS)
"""The ``coder``, ``tester`` and ``explorer`` tool classes every Coding run registers."""


def delegate_name(member: str) -> str:
    return DELEGATE_PREFIX + member.replace("-", "_")


def member_tool(member: EffectiveAgent, lead: str) -> AnyTool:
    """A member's ``delegate_<name>`` tool, made from its own name and description."""
    description = f"Delegate to {member.name}: {member.description or 'a team member'}."
    delegation = Delegation(member.name, delegate_name(member.name), description, DelegateArgs, lead=lead, agent=member)
    tool: AnyTool = delegate_tool(delegation)()
    return tool


def delegate_tools(members: Sequence[EffectiveAgent], lead: str) -> list[AnyTool]:
    """Generated delegate tools for members that are not the workflow's built-in workers."""
    return [member_tool(m, lead) for m in members if not specialised(m)]


def specialised(member: EffectiveAgent) -> bool:
    """Coder, Tester and Explorer run through the built-in ``coder``/``tester``/``explorer`` tools."""
    return member.mode == "coding" and member.name in SPECIALISED_MEMBERS


def worker_cards(members: Sequence[EffectiveAgent]) -> tuple[WorkerCard, ...]:
    """The compact routing cards, one per member, from its name and description."""
    cards = []
    for member in members:
        tool = member.name if specialised(member) else delegate_name(member.name)
        cards.append(WorkerCard(tool, "task", member.description or member.name))
    return tuple(cards)
