"""What ``protoagent mcp list`` shows: each server, its file, its status and its tools.

The person's own servers (and repository servers the person trusted, inside the sandbox) are
started briefly to list their tools; untrusted repository servers are never started here, nor
trusted ones when no sandbox is available.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protoagent.integrations.mcp_broker import MCPBroker, MCPFailure
from protoagent.integrations.mcp_config import MCPServerSpec, load_mcp_config
from protoagent.integrations.mcp_trust import TrustStore


async def server_statuses(root: Path, home: Path | None, *, connect: bool = True) -> dict[str, Any]:
    """``{"servers": [...], "diagnostics": [...]}`` for the workspace ``root``."""
    trust = TrustStore(home)
    config = load_mcp_config(root, home, allowed_env=trust.allowed_env(root))
    broker = MCPBroker(config.servers, root, trust=trust)
    rows = []
    try:
        for spec in config.servers.values():
            trusted = trust.trusted(root, spec) if spec.disabled else broker.server_trusted(spec.name)
            rows.append(await _row(broker, spec, trusted, connect))
    finally:
        await broker.aclose()
    return {"servers": rows, "diagnostics": list(config.diagnostics)}


async def _row(broker: MCPBroker, spec: MCPServerSpec, trusted: bool, connect: bool) -> dict[str, Any]:
    row: dict[str, Any] = {
        "name": spec.name,
        "source": str(spec.source),
        "origin": "user" if spec.trusted else "project",
        "transport": spec.transport,
        "target": spec.as_written.command[0] if spec.transport == "stdio" else spec.as_written.url,
        "trusted": trusted,
        "tools": [],
    }
    if spec.disabled:
        return {**row, "status": "disabled"}
    if not trusted:
        return {**row, "status": "untrusted (asked for on first use in a run)"}
    if not connect:
        return {**row, "status": "enabled"}
    try:
        tools = await broker.list_tools(spec.name)
    except MCPFailure as failure:
        return {**row, "status": "error", "error": str(failure).splitlines()[0]}
    names = [t.name for t in tools if spec.tool_allowed(t.name)]
    return {**row, "status": "ok", "tools": names}
