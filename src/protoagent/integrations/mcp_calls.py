"""Preparing and running one MCP tool call, shared by ``call_mcp_tool`` and the native tools.

An MCP call's effect lies outside the workspace and its guarantees: it is an ``execute``
outside the workspace, so ``--approval auto`` runs it without asking only when the person's
own configuration trusts the server or the tool (``trusted_by`` says which), and a repository
cannot trust itself. Arguments are checked against the server's schema before approval. The
result is untrusted evidence; past the server's ``max_output`` the model sees the head and
pages through the rest with ``read_mcp_output``; the full text is kept as an artifact.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from protoagent.errors import ToolRejected
from protoagent.integrations.mcp_arguments import check_arguments
from protoagent.integrations.mcp_broker import MCPBroker, MCPFailure, MCPToolInfo, render_result
from protoagent.integrations.mcp_config import MCPServerSpec
from protoagent.integrations.untrusted import untrusted_header
from protoagent.tools.base import Effect, Prepared, ToolContext, ToolOutput

SUMMARY_CHARS = 200


@dataclass(frozen=True, slots=True)
class CallPlan:
    server: str
    tool: str = ""
    arguments: dict[str, Any] | None = None
    read_only: bool = False
    start_untrusted: bool = False
    """The call starts a repository server the person has not trusted yet; approval trusts it."""


def arguments_summary(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, sort_keys=True, default=str)
    return text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 3] + "..."


def start_step(broker: MCPBroker, server: str, purpose: str) -> tuple[str, Effect, bool]:
    """Preview and effect of a step that may start a server; the flag: it needs the person's trust."""
    spec = broker.server(server)
    if broker.running(server):
        return f"{purpose} of MCP server {server!r} (already running in this run)", "read", False
    note = broker.confinement_note(server)
    start = f"start {spec.describe()}\nthen {purpose}" + (f"\n{note}" if note else "")
    if broker.server_trusted(server):
        return start, "read", False
    preview = (
        f"{start}\nthis server is declared by the repository and is untrusted: approving trusts it for this "
        "repository (remembered until what it runs changes: its command, arguments, environment, headers, "
        "URL or the repository files its command names)"
    )
    return preview, "execute", True


def trusted_by(spec: MCPServerSpec, tool: str) -> str:
    if not spec.call_trusted(tool):
        return ""
    if spec.trusted_all:
        return f"MCP server {spec.name!r} is trusted in {spec.source}"
    return f"MCP tool {tool!r} is listed in trusted_tools of server {spec.name!r} in {spec.source}"


def prepare_call(broker: MCPBroker, server: str, tool: str, arguments: dict[str, Any]) -> Prepared[CallPlan]:
    """Check the call against the remembered schema and build the preview the approver sees."""
    spec = broker.server(server)
    tools = broker.cached_tools(server)
    if tools is None:
        raise ToolRejected(
            f"the tools of MCP server {server!r} are not known yet: call "
            f"mcp_tool_schema(server={server!r}, tool={tool!r}) first, so the arguments can be "
            "checked against the server's schema before approval",
            kind="schema_unknown",
            details={"server": server, "tool": tool},
        )
    info = broker.find_tool(server, tool, tools)
    check = check_arguments(info.input_schema, arguments)
    if check.problems:
        raise ToolRejected(
            f"invalid arguments for MCP tool {tool!r}: {'; '.join(check.problems)}. "
            "Fix the arguments and call it again.",
            kind="invalid_arguments",
            details={"errors": list(check.problems), "checker": check.checker, "input_schema": info.input_schema},
        )
    trust = trusted_by(spec, tool)
    preview = (
        f"call MCP tool {tool!r} on {spec.describe()}\n"
        f"arguments: {json.dumps(arguments, sort_keys=True)}\n"
        f"arguments checked against the server's schema ({check.checker})\n"
        "its effects are outside the workspace: ProtoAgent cannot see, check or undo them"
        + (f"\ntrusted in configuration: {trust}" if trust else "")
    )
    plan = CallPlan(server, tool, arguments, info.read_only)
    external = f"MCP tool {tool!r} of server {server!r}"
    return Prepared(preview, "execute", inside_workspace=False, state=plan, trusted_by=trust, external=external)


async def execute_call(broker: MCPBroker, plan: CallPlan, ctx: ToolContext) -> ToolOutput:
    effect = {"server": plan.server, "tool": plan.tool, "arguments_summary": arguments_summary(plan.arguments or {})}
    data: dict[str, Any] = {**effect, "external_effect": not plan.read_only}
    try:
        result = await broker.call_tool(plan.server, plan.tool, plan.arguments or {})
    except MCPFailure as failure:
        return ToolOutput(str(failure), status="error", data=data)
    spec = broker.server(plan.server)
    header = untrusted_header(f"MCP server {plan.server!r} tool {plan.tool!r}")
    text = render_result(result)
    data |= {"is_error": bool(result.is_error), "truncated": len(text) > spec.max_output}
    artifact = None
    if len(text) > spec.max_output:
        artifact = broker.keep_output(ctx.call_id, text, ctx.artifacts_dir)
        data["total_chars"] = len(text)
        text = (
            text[: spec.max_output] + f"\n[{len(text)} characters in all; the first {spec.max_output} are shown. "
            f"Read on with read_mcp_output(call_id={ctx.call_id!r}, offset={spec.max_output})]"
        )
    return ToolOutput(f"{header}\n{text}", status="error" if result.is_error else "ok", data=data, artifact=artifact)


def failure_output(failure: MCPFailure, plan: CallPlan) -> ToolOutput:
    return ToolOutput(str(failure), status="error", data={"server": plan.server, "tool": plan.tool})


async def listed_tools(broker: MCPBroker, plan: CallPlan) -> tuple[MCPToolInfo, ...]:
    """The server's tools (remembered, or by starting it); trust is remembered once approved."""
    cached = broker.cached_tools(plan.server)
    if cached is not None:
        return cached
    if plan.start_untrusted:
        broker.remember_trust(plan.server)
    return await broker.list_tools(plan.server)
