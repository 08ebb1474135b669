"""What MCP calls did outside the workspace, read back from the session log for the report.

ProtoAgent cannot see or undo what an MCP server does, so every call that may have had a side
effect (any tool not declared read-only by its server) is listed in the run's report as an
``external_effect``: server, tool, a short summary of the arguments, and the call's status
(``ok``, ``error`` or ``denied``). Problems with the MCP files are recorded as one
``mcp.diagnostics`` event and become report notes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from protoagent.events.catalog import McpDiagnostics, ToolEnded, ToolStarted
from protoagent.events.queries import facts
from protoagent.events.types import Event
from protoagent.integrations.mcp_calls import arguments_summary

DIAGNOSTICS_EVENT = "mcp.diagnostics"
CALL_TOOLS = frozenset({"call_mcp_tool"})
NATIVE_PREFIX = "mcp__"


def is_mcp_call(tool: str) -> bool:
    return tool in CALL_TOOLS or (tool.startswith(NATIVE_PREFIX) and tool.count("__") >= 2)


def external_effects(events: Iterable[Event]) -> list[dict[str, Any]]:
    """Every MCP call that ran or was refused at approval, unless its tool is declared read-only."""
    effects: list[dict[str, Any]] = []
    asked: dict[str, dict[str, Any]] = {}
    for event in events:
        if (started := event.fact(ToolStarted)) is not None and is_mcp_call(started.tool):
            asked[started.call_id] = dict(started.arguments)
        ended = event.fact(ToolEnded)
        if ended is None or not is_mcp_call(ended.tool):
            continue
        status = ended.status
        data = ended.data
        if status == "rejected" or data.get("external_effect") is False:
            continue
        arguments = asked.get(ended.call_id, {})
        server, tool = _names(ended.tool, data, arguments)
        summary = data.get("arguments_summary")
        if not isinstance(summary, str):
            native = ended.tool.startswith(NATIVE_PREFIX)
            inner = arguments if native else arguments.get("arguments", {})
            summary = arguments_summary(inner if isinstance(inner, dict) else {"arguments": inner})
        effects.append({"server": server, "tool": tool, "arguments_summary": summary, "status": status})
    return effects


def _names(name: str, data: dict[str, Any], arguments: dict[str, Any]) -> tuple[str, str]:
    if "server" in data and "tool" in data:
        return str(data["server"]), str(data["tool"])
    if name.startswith(NATIVE_PREFIX):
        server, _, tool = name[len(NATIVE_PREFIX) :].partition("__")
        return server, tool
    return str(arguments.get("server", "")), str(arguments.get("tool", ""))


def diagnostics_notes(events: Iterable[Event]) -> list[str]:
    """The MCP file problems a run recorded, as report notes."""
    return [f"MCP: {line}" for _, found in facts(events, McpDiagnostics) for line in found.diagnostics]
