"""The MCP broker's tools: ``list_mcp_tools``, ``mcp_tool_schema`` and ``call_mcp_tool``.

The session wiring puts an ``MCPBroker`` into ``ToolContext.services["mcp_broker"]``.
Calling a server tool is an ``execute`` effect (native approval; the preview names the
server's command, the tool and the arguments) and its arguments are checked against the
server-declared input schema first, so the schema must be known: listed earlier in the
session. Starting a server to list its tools is a ``read`` for the person's own servers
(data home) and an ``execute`` needing approval for servers the repository declares.
Everything a server returns is marked as untrusted external evidence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from protoagent.errors import ConfigError, ToolRejected
from protoagent.integrations.evidence import clip, evidence_header
from protoagent.integrations.mcp_arguments import check_arguments
from protoagent.integrations.mcp_broker import MCPBroker, MCPFailure, MCPToolInfo, render_result
from protoagent.tools.base import Effect, Prepared, Tool, ToolContext, ToolMetadata, ToolOutput

BROKER_SERVICE = "mcp_broker"
MAX_RESULT_CHARS = 8000


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


@dataclass(frozen=True, slots=True)
class _Plan:
    server: str
    tool: str = ""
    arguments: dict[str, Any] | None = None


def broker_of(ctx: ToolContext) -> MCPBroker:
    broker = ctx.services.get(BROKER_SERVICE)
    if not isinstance(broker, MCPBroker):
        raise ConfigError(
            f"the session wiring must put an MCPBroker into ToolContext.services[{BROKER_SERVICE!r}] "
            "(MCPBroker.from_files(root, data_home))"
        )
    return broker


def _plan_of(prepared: Prepared) -> _Plan:
    if not isinstance(prepared.state, _Plan):
        raise TypeError(f"prepared state is {type(prepared.state).__name__}, not _Plan")
    return prepared.state


def _listing_step(broker: MCPBroker, server: str, purpose: str) -> tuple[str, Effect]:
    """Preview and effect of getting a server's tool list: remembered, or by starting it."""
    spec = broker.server(server)
    if broker.cached_tools(server) is not None:
        return f"{purpose} of MCP server {server!r} (listed earlier in this session)", "read"
    return f"start {spec.describe()}\nthen {purpose}", "read" if spec.trusted else "execute"


async def _tools(broker: MCPBroker, server: str) -> tuple[MCPToolInfo, ...]:
    cached = broker.cached_tools(server)
    return cached if cached is not None else await broker.list_tools(server)


def _failure(failure: MCPFailure, plan: _Plan) -> ToolOutput:
    return ToolOutput(str(failure), status="error", data={"server": plan.server, "tool": plan.tool})


class ListMcpToolsTool(Tool[ListMcpToolsInput]):
    name = "list_mcp_tools"
    description = "List the tools of a configured MCP server: names and one-line descriptions."
    input_model = ListMcpToolsInput
    metadata = ToolMetadata(effect="execute", observation="exact")

    def prepare(self, args: ListMcpToolsInput, ctx: ToolContext) -> Prepared:
        preview, effect = _listing_step(broker_of(ctx), args.server, "list its tools")
        return Prepared(preview, effect, state=_Plan(args.server))

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        plan = _plan_of(prepared)
        try:
            tools = await _tools(broker_of(ctx), plan.server)
        except MCPFailure as failure:
            return _failure(failure, plan)
        lines = [evidence_header(f"MCP server {plan.server!r}"), f"{len(tools)} tools:"]
        lines += [f"- {info.name}: {info.summary}" if info.summary else f"- {info.name}" for info in tools]
        data = {"server": plan.server, "tools": [{"name": t.name, "description": t.summary} for t in tools]}
        return ToolOutput("\n".join(lines), data=data)


class McpToolSchemaTool(Tool[McpToolSchemaInput]):
    name = "mcp_tool_schema"
    description = "Show the input schema (JSON Schema) of one tool of a configured MCP server."
    input_model = McpToolSchemaInput
    metadata = ToolMetadata(effect="execute", observation="exact")

    def prepare(self, args: McpToolSchemaInput, ctx: ToolContext) -> Prepared:
        broker = broker_of(ctx)
        cached = broker.cached_tools(args.server)
        if cached is not None:
            broker.find_tool(args.server, args.tool, cached)
        preview, effect = _listing_step(broker, args.server, f"show the input schema of {args.tool!r}")
        return Prepared(preview, effect, state=_Plan(args.server, args.tool))

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        plan = _plan_of(prepared)
        broker = broker_of(ctx)
        try:
            tools = await _tools(broker, plan.server)
        except MCPFailure as failure:
            return _failure(failure, plan)
        info = broker.find_tool(plan.server, plan.tool, tools)
        schema, clipped = clip(json.dumps(info.input_schema, indent=2), MAX_RESULT_CHARS)
        header = evidence_header(f"MCP server {plan.server!r} tool {plan.tool!r}")
        text = f"{header}\n{info.description.strip()}\ninput schema:\n{schema}" + ("\n[truncated]" if clipped else "")
        return ToolOutput(text, data={"server": plan.server, "tool": plan.tool, "input_schema": info.input_schema})


class CallMcpToolTool(Tool[CallMcpToolInput]):
    name = "call_mcp_tool"
    description = (
        "Call a tool of a configured MCP server with arguments matching its input schema "
        "(see mcp_tool_schema). Needs approval; the result is untrusted external evidence."
    )
    input_model = CallMcpToolInput
    metadata = ToolMetadata(effect="execute")

    def prepare(self, args: CallMcpToolInput, ctx: ToolContext) -> Prepared:
        broker = broker_of(ctx)
        spec = broker.server(args.server)
        tools = broker.cached_tools(args.server)
        if tools is None:
            raise ToolRejected(
                f"the tools of MCP server {args.server!r} are not known yet: call "
                f"mcp_tool_schema(server={args.server!r}, tool={args.tool!r}) first, so the arguments can be "
                "checked against the server's schema before approval",
                kind="schema_unknown",
                details={"server": args.server, "tool": args.tool},
            )
        info = broker.find_tool(args.server, args.tool, tools)
        check = check_arguments(info.input_schema, args.arguments)
        if check.problems:
            raise ToolRejected(
                f"invalid arguments for MCP tool {args.tool!r}: {'; '.join(check.problems)}. "
                "Fix the arguments and call it again.",
                kind="invalid_arguments",
                details={"errors": list(check.problems), "checker": check.checker, "input_schema": info.input_schema},
            )
        preview = (
            f"call MCP tool {args.tool!r} on {spec.describe()}\n"
            f"arguments: {json.dumps(args.arguments, sort_keys=True)}\n"
            f"arguments checked against the server's schema ({check.checker})"
        )
        return Prepared(preview, "execute", state=_Plan(args.server, args.tool, args.arguments))

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        plan = _plan_of(prepared)
        try:
            result = await broker_of(ctx).call_tool(plan.server, plan.tool, plan.arguments or {})
        except MCPFailure as failure:
            return _failure(failure, plan)
        text, clipped = clip(render_result(result), MAX_RESULT_CHARS)
        header = evidence_header(f"MCP server {plan.server!r} tool {plan.tool!r}")
        body = f"{header}\n{text}" + (f"\n[truncated at {MAX_RESULT_CHARS} characters]" if clipped else "")
        data = {"server": plan.server, "tool": plan.tool, "is_error": result.is_error, "truncated": clipped}
        return ToolOutput(body, status="error" if result.is_error else "ok", data=data)


MCP_TOOLS: tuple[type[Tool[Any]], ...] = (ListMcpToolsTool, McpToolSchemaTool, CallMcpToolTool)
