"""``worker_packet``: bounded source context for a worker, prepared but never executed."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, Field

from protoagent.errors import ToolRejected
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workflow.task_tools import board_of
from protoagent.workspace.inputs import ReadFileInput
from protoagent.workspace.tools import ReadFileTool

MAX_REFERENCES = 8
SOURCE_BUDGET = 6000
DISPATCH_REMINDER = (
    "This packet executed nothing and changed nothing. Delegate it now: call coder(task) or tester(task) "
    "with this context. Do not prepare it again, and do not start final verification before Coder has "
    "applied the edits."
)


class PacketArgs(BaseModel):
    role: Literal["explorer", "coder", "tester"] = Field(description="exact worker role")
    objective: str = Field(min_length=1, description="what the worker must do")
    paths: list[str] = Field(default_factory=list, description="up to 8 source files")


class WorkerPacket(Tool[PacketArgs]):
    name = "worker_packet"
    description = "Prepare bounded source context for a worker; executes nothing."
    input_model = PacketArgs
    metadata = ToolMetadata(effect="read", roles=frozenset({"architect", "main"}))

    def prepare(self, args: PacketArgs, ctx: ToolContext) -> Prepared:
        if len(args.paths) > MAX_REFERENCES:
            raise ToolRejected(
                f"a packet holds at most {MAX_REFERENCES} references; got {len(args.paths)}", kind="too_many_references"
            )
        return Prepared(preview=f"packet for {args.role}", effect="read", state=args)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        args: PacketArgs = prepared.state
        reader, budget = ReadFileTool(), SOURCE_BUDGET
        sources = []
        for path in args.paths:
            if budget <= 0:
                sources.append({"path": path, "omitted": "source budget of 6000 characters used up"})
                continue
            try:
                read = reader.prepare(
                    ReadFileInput(path=path, start_line=1, end_line=None), replace(ctx, agent_role="explorer")
                )
                out = await reader.execute(read, replace(ctx, agent_role="explorer"))
            except ToolRejected as rejection:
                sources.append({"path": path, "error": rejection.message})
                continue
            content = str(out.data["content"])[:budget]
            budget -= len(content)
            sources.append({"path": path, "revision": out.data["revision"], "content": content})
        record = board_of(ctx).record
        packet = {
            "executed": False,
            "role": args.role,
            "objective": args.objective,
            "sources": sources,
            "criteria": list(record.criteria),
            "check_ids": list(record.selected_check_ids),
            "reminder": DISPATCH_REMINDER,
        }
        return ToolOutput(
            json.dumps(packet, indent=1), data={"executed": False, "role": args.role, "paths": list(args.paths)}
        )


PACKET_TOOLS = (WorkerPacket,)
