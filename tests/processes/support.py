"""Helpers shared by the processes tests: build a tool context, run a tool call, read output."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from protoagent.processes import ProcessRegistry
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolOutput
from protoagent.tools.services import RunServices


def make_ctx(root: Path, artifacts: Path, registry: ProcessRegistry, **services: Any) -> ToolContext:
    return ToolContext(
        session_id="s-test",
        call_id="c-test",
        root=root,
        artifacts_dir=artifacts,
        services=RunServices(processes=registry, **services),
    )


def run_tool(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> ToolOutput:
    """Prepare and execute one call the way the pipeline does, minus approval."""
    return execute(tool, tool.prepare(tool.input_model(**arguments), ctx), ctx)


def execute(tool: Tool[Any], prepared: Prepared, ctx: ToolContext) -> ToolOutput:
    return asyncio.run(tool.execute(prepared, ctx))


def body(output: ToolOutput) -> str:
    """The observed output: everything after the status line."""
    return output.text.partition("\n")[2]
