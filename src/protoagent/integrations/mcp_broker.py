"""``MCPBroker``: talks to configured stdio MCP servers with the official ``mcp`` SDK.

Every operation opens a fresh session: the SDK starts the server process, the operation runs
under one timeout, and leaving the session closes stdin, then terminates and reaps the
server's whole process group, so no server outlives the call. Tool listings are remembered
for the broker's lifetime (one session) so arguments can be checked against the server's
declared input schema before any approval. The SDK is imported only when a server is used.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar

from protoagent.errors import ConfigError, ToolRejected
from protoagent.integrations.mcp_config import WORKSPACE_MCP_FILE, MCPServerSpec, load_mcp_servers

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult

T = TypeVar("T")
DEFAULT_TIMEOUT_S = 60.0
MAX_LIST_PAGES = 20


@dataclass(frozen=True, slots=True)
class MCPToolInfo:
    """One tool a server declares."""

    name: str
    description: str
    input_schema: dict[str, Any]

    @property
    def summary(self) -> str:
        """The description's first line."""
        lines = self.description.strip().splitlines()
        return lines[0].strip() if lines else ""


class MCPFailure(Exception):
    """A server could not be started or failed mid-session: reported as an error output."""


class MCPBroker:
    """The MCP servers of one session and the tool listings already fetched from them."""

    def __init__(
        self, servers: Mapping[str, MCPServerSpec], root: Path, *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> None:
        self.servers = dict(servers)
        self.root = root
        self.timeout_s = timeout_s
        self._listings: dict[str, tuple[MCPToolInfo, ...]] = {}

    @classmethod
    def from_files(cls, root: Path, home: Path | None, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> MCPBroker:
        """Read ``<home>/mcp.json`` and ``<root>/.protoagent/mcp.json``; a malformed file raises ``ConfigError``."""
        return cls(load_mcp_servers(root, home), root, timeout_s=timeout_s)

    def server(self, name: str) -> MCPServerSpec:
        spec = self.servers.get(name)
        if spec is not None:
            return spec
        if not self.servers:
            raise ToolRejected(
                f"no MCP servers are configured; a person can declare them in {WORKSPACE_MCP_FILE} "
                'or in mcp.json in the data home as {"servers": {"name": {"command": [...]}}}',
                kind="unknown_mcp_server",
                details={"available_servers": []},
            )
        names = sorted(self.servers)
        raise ToolRejected(
            f"unknown MCP server {name!r}; use one of: {', '.join(names)}",
            kind="unknown_mcp_server",
            details={"available_servers": names},
        )

    def cached_tools(self, server: str) -> tuple[MCPToolInfo, ...] | None:
        return self._listings.get(server)

    def find_tool(self, server: str, tool: str, tools: tuple[MCPToolInfo, ...]) -> MCPToolInfo:
        for info in tools:
            if info.name == tool:
                return info
        names = [info.name for info in tools]
        raise ToolRejected(
            f"MCP server {server!r} has no tool {tool!r}; its tools are: {', '.join(names) or '(none)'}",
            kind="unknown_mcp_tool",
            details={"server": server, "available_tools": names},
        )

    async def list_tools(self, server: str) -> tuple[MCPToolInfo, ...]:
        """Start the server, list its tools, remember the listing."""

        async def action(session: ClientSession) -> tuple[MCPToolInfo, ...]:
            from mcp.types import PaginatedRequestParams

            found: list[MCPToolInfo] = []
            cursor: str | None = None
            for _ in range(MAX_LIST_PAGES):
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                found += [MCPToolInfo(t.name, t.description or "", dict(t.input_schema)) for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            return tuple(found)

        tools = await self._run(self.server(server), action)
        self._listings[server] = tools
        return tools

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        async def action(session: ClientSession) -> CallToolResult:
            return await session.call_tool(tool, arguments)

        return await self._run(self.server(server), action)

    async def _run(self, spec: MCPServerSpec, action: Callable[[ClientSession], Awaitable[T]]) -> T:
        try:
            import anyio
            from mcp import ClientSession, StdioServerParameters, stdio_client
        except ImportError:
            raise ConfigError("MCP servers need the mcp SDK: install protoagent[mcp]") from None
        params = StdioServerParameters(
            command=spec.command[0], args=list(spec.command[1:]), env=spec.env or None, cwd=self.root
        )
        with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
            try:
                with anyio.fail_after(self.timeout_s):
                    async with stdio_client(params, errlog=errlog) as (read, write):
                        async with ClientSession(read, write) as session:
                            await session.initialize()
                            return await action(session)
            except Exception as exc:
                leaf = _leaf(exc)
                if isinstance(leaf, ToolRejected):
                    raise leaf from None
                raise MCPFailure(f"{spec.describe()} failed: {_explain(leaf, self.timeout_s)}{_tail(errlog)}") from None


def _leaf(exc: BaseException) -> BaseException:
    """The one real error inside the task groups' nested exception groups."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _explain(exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, FileNotFoundError):
        return f"the command was not found ({exc}); check the server's command"
    return f"{type(exc).__name__}: {exc}"


def _tail(errlog: IO[str], limit: int = 600) -> str:
    errlog.flush()
    errlog.seek(0)
    text = errlog.read().strip()
    return f"\nserver stderr (last {limit} characters):\n{text[-limit:]}" if text else ""


def render_result(result: CallToolResult) -> str:
    """The text of a tool result; images, audio and binary resources are summarized."""
    from mcp.types import (
        AudioContent,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )

    parts: list[str] = []
    for block in result.content:
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, ImageContent | AudioContent):
            kind = "image" if isinstance(block, ImageContent) else "audio"
            parts.append(f"[{kind} content: {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]")
        elif isinstance(block, ResourceLink):
            parts.append(f"[resource link: {block.uri} ({block.name})]")
        elif isinstance(block, EmbeddedResource):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(f"[binary resource {resource.uri}, {resource.mime_type or 'unknown type'}, not shown]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, indent=2, default=str))
    return "\n".join(parts)
