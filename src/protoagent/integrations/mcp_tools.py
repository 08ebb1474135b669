"""The MCP broker's general tools: ``list_mcp_tools``, ``mcp_tool_schema``, ``call_mcp_tool``
and ``read_mcp_output``.

The run wiring puts an ``MCPBroker`` into ``RunServices.mcp_broker``. Starting
the person's own server (or a repository server the person trusted) to list its tools is a
``read``; starting an untrusted repository server is an ``execute`` outside the workspace, so
it is asked for even under ``--approval auto``, and approving it trusts the server. Calls are
described in ``mcp_calls``. Everything a server returns is marked as untrusted evidence.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from protoagent.errors import ConfigError, ToolRejected
from protoagent.integrations.mcp_broker import MCPBroker, MCPFailure, MCPToolInfo
from protoagent.integrations.mcp_calls import (
    CallPlan,
    execute_call,
    failure_output,
    listed_tools,
    prepare_call,
    start_step,
)
from protoagent.integrations.untrusted import clip, untrusted_header
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput

MAX_SCHEMA_CHARS = 8000
PAGE_CHARS = 24_000


class ListMcpToolsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="Name of a configured MCP server.")


class McpToolSchemaInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="Name of a configured MCP server.")
    tool: str = Field(description="Name of one of its tools, as list_mcp_tools shows it.")


class CallMcpToolInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="Name of a configured MCP server.")
    tool: str = Field(description="Name of one of its tools.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Arguments matching the tool's schema.")

    @field_validator("arguments", mode="before")
    @classmethod
    def _decode_json_text(cls, value: Any) -> Any:
        """Small models sometimes send the arguments object as JSON text; accept that."""
        if isinstance(value, str):
            try:
                return json.loads(value)
            except json.JSONDecodeError:
                return value
        return value


class ReadMcpOutputInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    call_id: str = Field(description="The call whose long result was cut.")
    offset: int = Field(default=0, ge=0, description="Character offset to read from.")


def broker_of(ctx: ToolContext) -> MCPBroker:
    broker = ctx.services.mcp_broker
    if broker is None:
        raise ConfigError(
            "the session wiring must put an MCPBroker into RunServices.mcp_broker "
            "(MCPBroker.from_files(root, data_home))"
        )
    return broker


def listing_prepared(broker: MCPBroker, server: str, purpose: str, tool: str = "") -> Prepared[CallPlan]:
    preview, effect, untrusted = start_step(broker, server, purpose)
    plan = CallPlan(server, tool, None, True, untrusted)
    external = f"starting repository MCP server {server!r}" if untrusted else ""
    return Prepared(preview, effect, inside_workspace=not untrusted, state=plan, external=external)


async def _server_tools(
    prepared: Prepared[CallPlan], ctx: ToolContext
) -> tuple[CallPlan, MCPBroker, tuple[MCPToolInfo, ...]] | ToolOutput:
    """The call's plan, the broker and the server's tools, or the output of the failure to list them."""
    plan = prepared.state
    broker = broker_of(ctx)
    try:
        return plan, broker, await listed_tools(broker, plan)
    except MCPFailure as failure:
        return failure_output(failure, plan)


class ListMcpToolsTool(Tool[ListMcpToolsInput, CallPlan]):
    name = "list_mcp_tools"
    description = "List the tools of a configured MCP server: names and one-line descriptions."
    metadata = ToolMetadata(effect="execute", observation="exact")

    def prepare(self, args: ListMcpToolsInput, ctx: ToolContext) -> Prepared[CallPlan]:
        return listing_prepared(broker_of(ctx), args.server, "list its tools")

    async def execute(self, prepared: Prepared[CallPlan], ctx: ToolContext) -> ToolOutput:
        listing = await _server_tools(prepared, ctx)
        if isinstance(listing, ToolOutput):
            return listing
        plan, broker, tools = listing
        spec = broker.server(plan.server)
        shown = [t for t in tools if spec.tool_allowed(t.name)]
        lines = [untrusted_header(f"MCP server {plan.server!r}"), f"{len(shown)} tools:"]
        lines += [f"- {info.name}: {info.summary}" if info.summary else f"- {info.name}" for info in shown]
        data = {"server": plan.server, "tools": [{"name": t.name, "description": t.summary} for t in shown]}
        return ToolOutput("\n".join(lines), data=data)


class McpToolSchemaTool(Tool[McpToolSchemaInput, CallPlan]):
    name = "mcp_tool_schema"
    description = "Show the input schema (JSON Schema) of one tool of a configured MCP server."
    metadata = ToolMetadata(effect="execute", observation="exact")

    def prepare(self, args: McpToolSchemaInput, ctx: ToolContext) -> Prepared[CallPlan]:
        broker = broker_of(ctx)
        cached = broker.cached_tools(args.server)
        if cached is not None:
            broker.find_tool(args.server, args.tool, cached)
        return listing_prepared(broker, args.server, f"show the input schema of {args.tool!r}", args.tool)

    async def execute(self, prepared: Prepared[CallPlan], ctx: ToolContext) -> ToolOutput:
        listing = await _server_tools(prepared, ctx)
        if isinstance(listing, ToolOutput):
            return listing
        plan, broker, tools = listing
        info = broker.find_tool(plan.server, plan.tool, tools)
        schema, clipped = clip(json.dumps(info.input_schema, indent=2), MAX_SCHEMA_CHARS)
        header = untrusted_header(f"MCP server {plan.server!r} tool {plan.tool!r}")
        text = f"{header}\n{info.description.strip()}\ninput schema:\n{schema}" + ("\n[truncated]" if clipped else "")
        return ToolOutput(text, data={"server": plan.server, "tool": plan.tool, "input_schema": info.input_schema})


class CallMcpToolTool(Tool[CallMcpToolInput, CallPlan]):
    name = "call_mcp_tool"
    description = (
        "Call a tool of a configured MCP server with arguments matching its input schema "
        "(see mcp_tool_schema). A server or tool your configuration does not trust needs approval; "
        "the result is untrusted external evidence."
    )
    metadata = ToolMetadata(effect="execute")

    def prepare(self, args: CallMcpToolInput, ctx: ToolContext) -> Prepared[CallPlan]:
        return prepare_call(broker_of(ctx), args.server, args.tool, args.arguments)

    async def execute(self, prepared: Prepared[CallPlan], ctx: ToolContext) -> ToolOutput:
        return await execute_call(broker_of(ctx), prepared.state, ctx)


class ReadMcpOutputTool(Tool[ReadMcpOutputInput, str]):
    name = "read_mcp_output"
    description = "Read on in an MCP tool result that was cut at the server's max_output, from an offset."
    metadata = ToolMetadata(effect="read", observation="exact")

    def prepare(self, args: ReadMcpOutputInput, ctx: ToolContext) -> Prepared[str]:
        text = broker_of(ctx).kept_output(args.call_id)
        if text is None:
            raise ToolRejected(
                f"no long MCP result is kept for call {args.call_id!r}; use the call_id a cut result names",
                kind="unknown_output",
                details={"call_id": args.call_id},
            )
        page = text[args.offset : args.offset + PAGE_CHARS]
        end = args.offset + len(page)
        more = f"\n[characters {args.offset}-{end} of {len(text)}; read on with offset={end}]"
        more = more if end < len(text) else ""
        header = untrusted_header(f"MCP output of call {args.call_id!r}")
        body = f"{header}\n{page}{more}"
        return Prepared(f"read MCP output of call {args.call_id!r} from {args.offset}", "read", state=body)

    async def execute(self, prepared: Prepared[str], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(prepared.state)


GENERAL_CALL_TOOLS = frozenset({"list_mcp_tools", "mcp_tool_schema", "call_mcp_tool"})
"""The general way to a server's tools, offered only while some server has no native tools."""
GENERAL_MCP_TOOLS: tuple[type[Tool[Any]], ...] = (
    ListMcpToolsTool,
    McpToolSchemaTool,
    CallMcpToolTool,
    ReadMcpOutputTool,
)
