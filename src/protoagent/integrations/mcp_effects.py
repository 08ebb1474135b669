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
        if event.type == "tool.started" and is_mcp_call(str(event.payload["tool"])):
            asked[str(event.payload["call_id"])] = dict(event.payload.get("arguments") or {})
        if event.type != "tool.ended" or not is_mcp_call(str(event.payload["tool"])):
            continue
        status = str(event.payload["status"])
        data = event.payload.get("data") or {}
        if status == "rejected" or data.get("external_effect") is False:
            continue
        arguments = asked.get(str(event.payload["call_id"]), {})
        server, tool = _names(str(event.payload["tool"]), data, arguments)
        summary = data.get("arguments_summary")
        if not isinstance(summary, str):
            native = str(event.payload["tool"]).startswith(NATIVE_PREFIX)
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
    notes: list[str] = []
    for event in events:
        if event.type == DIAGNOSTICS_EVENT:
            notes += [f"MCP: {line}" for line in event.payload.get("diagnostics", [])]
    return notes


def describe_effect(effect: dict[str, Any]) -> str:
    """One line of the text report."""
    return f"{effect['server']}/{effect['tool']} {effect['arguments_summary']} ({effect['status']})"
