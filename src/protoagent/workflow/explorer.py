"""The ``explorer`` tool: the Architect delegates read-only source discovery to Explorer.

Explorer is a member of the Coding lead's team (its own card, its compiled prompt and read-only
tools); it runs as an owned child of the run, inside its session, approvals and budget, and
hands back what it found. What it says is a pointer to source, never evidence of a change.
"""

from __future__ import annotations

from protoagent.agents.profiles import ARCHITECT
from protoagent.errors import ToolRejected
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workflow.workers import AssignmentArgs, runner_of

EXPLORER = "explorer"


class ExplorerTool(Tool[AssignmentArgs]):
    name = EXPLORER
    description = "Read-only Explorer finds the relevant paths and lines."
    input_model = AssignmentArgs
    metadata = ToolMetadata(effect="none", observation="exact", roles=frozenset({ARCHITECT}))

    def prepare(self, args: AssignmentArgs, ctx: ToolContext) -> Prepared:
        if EXPLORER not in runner_of(ctx).members:
            raise ToolRejected(
                "Explorer is not a member of this lead's team (turned off?); read the source yourself "
                "with read_file, list_directory and search_regex",
                kind="no_explorer",
            )
        return Prepared(preview=args.task, effect="none", state=args.task)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        runner = runner_of(ctx)
        found = await runner.run_member(runner.members[EXPLORER], str(prepared.state))
        text = f"findings (read-only discovery; pointers to source, not evidence):\n{found}"
        return ToolOutput(text, data={"advice": EXPLORER})


EXPLORER_TOOLS = (ExplorerTool,)
