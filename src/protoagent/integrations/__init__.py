"""Optional integrations: Scout (web search and fetch) and the MCP broker, off by default.

Importing this package never imports the ``mcp`` SDK or ``httpx``; they load on first use.
"""

from __future__ import annotations

from typing import Any

from protoagent.integrations.mcp_prompts import MCP_RESOURCE_TOOLS
from protoagent.integrations.mcp_tools import GENERAL_MCP_TOOLS
from protoagent.integrations.scout import SCOUT_TOOLS
from protoagent.tools.base import Tool

__all__ = ["MCP_TOOLS", "SCOUT_TOOLS", "integration_tools"]
MCP_TOOLS: tuple[type[Tool[Any]], ...] = (*GENERAL_MCP_TOOLS, *MCP_RESOURCE_TOOLS)


def integration_tools(scout: bool = False, mcp: bool = False) -> tuple[type[Tool[Any]], ...]:
    """The tool classes of the enabled integrations (none unless asked for)."""
    return (SCOUT_TOOLS if scout else ()) + (MCP_TOOLS if mcp else ())
