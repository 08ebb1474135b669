"""``MCPBroker``: the MCP servers of one run, each started once, on first use, with the SDK.

A server starts lazily when a tool first needs it and keeps its session (and its state) for
the rest of the run; ``aclose`` stops every server and belongs on the run's cleanup path, so it
happens however the run ends. A server that crashed is started again on its next use. Tool
listings are remembered so arguments can be checked against the server's declared input
schema before any approval. The SDK is imported only when a server is used.

A repository's stdio servers run inside the run's sandbox, with a HOME and temp folder of
their own that ``aclose`` removes. Without a sandbox (none available under ``--sandbox auto``)
a repository's server is never trusted from memory: every start asks, as every command does.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protoagent.errors import ToolRejected
from protoagent.integrations.mcp_config import WORKSPACE_MCP_FILE, MCPConfig, MCPServerSpec, load_mcp_config
from protoagent.integrations.mcp_git import write_git_shim
from protoagent.integrations.mcp_session import Action, Confinement, MCPConnection, MCPFailure
from protoagent.integrations.mcp_trust import TrustStore
from protoagent.processes.command import CommandSandbox
from protoagent.processes.sandbox import asks_each_command, select_sandbox

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult

__all__ = ["MAX_LIST_PAGES", "MCPBroker", "MCPFailure", "MCPToolInfo", "render_result"]
MAX_LIST_PAGES = 20


@dataclass(frozen=True, slots=True)
class MCPToolInfo:
    """One tool a server declares."""

    name: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool = False
    """The server's ``readOnlyHint``: a claim, used only to leave a call out of the effects list."""

    @property
    def summary(self) -> str:
        """The description's first line."""
        lines = self.description.strip().splitlines()
        return lines[0].strip() if lines else ""


class MCPBroker:
    """The MCP servers of one run, their live sessions and the tool listings fetched from them."""

    def __init__(
        self,
        servers: Mapping[str, MCPServerSpec],
        root: Path,
        *,
        timeout_s: float | None = None,
        trust: TrustStore | None = None,
        diagnostics: tuple[str, ...] = (),
        sandbox: CommandSandbox | None = None,
    ) -> None:
        """``sandbox``: the run's command sandbox (``--sandbox auto``'s choice when not given)."""
        self.servers = {n: s for n, s in servers.items() if not s.disabled}
        if timeout_s is not None:
            self.servers = {n: replace(s, timeout_s=timeout_s) for n, s in self.servers.items()}
        self.root = root
        self.trust = trust or TrustStore(None)
        self.diagnostics = diagnostics
        self._listings: dict[str, tuple[MCPToolInfo, ...]] = {}
        self._connections: dict[str, MCPConnection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._outputs: dict[str, str] = {}
        self._starts: dict[str, int] = {}
        self.sandbox: CommandSandbox = sandbox if sandbox is not None else select_sandbox("auto")
        self._folder: Path | None = None
        self._git_shim: Path | None = None

    @classmethod
    def from_files(
        cls, root: Path, home: Path | None, *, timeout_s: float | None = None, sandbox: CommandSandbox | None = None
    ) -> MCPBroker:
        """Read the person's and the repository's MCP files; problems become ``diagnostics``.
        The repository's files expand only the variables the person allowed (``mcp allow-env``)."""
        trust = TrustStore(home)
        config: MCPConfig = load_mcp_config(root, home, allowed_env=trust.allowed_env(root))
        return cls(
            config.servers, root, timeout_s=timeout_s, trust=trust, diagnostics=config.diagnostics, sandbox=sandbox
        )

    @property
    def starts(self) -> dict[str, int]:
        """How many times each server was started in this run."""
        return dict(self._starts)

    def server(self, name: str) -> MCPServerSpec:
        spec = self.servers.get(name)
        if spec is not None:
            return spec
        if not self.servers:
            raise ToolRejected(
                f"no MCP servers are configured; a person can declare them in .mcp.json, {WORKSPACE_MCP_FILE} "
                'or mcp.json in the data home as {"mcpServers": {"name": {"command": "...", "args": [...]}}}',
                kind="unknown_mcp_server",
                details={"available_servers": []},
            )
        names = sorted(self.servers)
        raise ToolRejected(
            f"unknown MCP server {name!r}; use one of: {', '.join(names)}",
            kind="unknown_mcp_server",
            details={"available_servers": names},
        )

    def server_trusted(self, name: str) -> bool:
        """Whether the server may start without asking: the person's own, or trusted earlier as
        it is now (and a sandbox will confine it)."""
        spec = self.server(name)
        if not spec.trusted and spec.transport == "stdio" and asks_each_command(self.sandbox):
            return False
        return self.trust.trusted(self.root, spec)

    def confinement_note(self, name: str) -> str:
        """How the server will run, for the approval text."""
        spec = self.server(name)
        if spec.trusted or spec.transport != "stdio":
            return ""
        if asks_each_command(self.sandbox):
            return f"no sandbox is available, so it runs unconfined ({self.sandbox.name}); you are asked at every start"
        return f"it runs inside the sandbox: {self.sandbox.name}"

    def remember_trust(self, name: str) -> None:
        self.trust.trust(self.root, self.server(name))

    def running(self, name: str) -> bool:
        connection = self._connections.get(name)
        return connection is not None and connection.alive

    def cached_tools(self, server: str) -> tuple[MCPToolInfo, ...] | None:
        return self._listings.get(server)

    def find_tool(self, server: str, tool: str, tools: tuple[MCPToolInfo, ...]) -> MCPToolInfo:
        spec = self.server(server)
        for info in tools:
            if info.name == tool:
                if not spec.tool_allowed(tool):
                    raise ToolRejected(
                        f"MCP tool {tool!r} of server {server!r} is turned off in {spec.source} (allow/deny)",
                        kind="mcp_tool_not_allowed",
                        details={"server": server, "tool": tool},
                    )
                return info
        names = [info.name for info in tools if spec.tool_allowed(info.name)]
        raise ToolRejected(
            f"MCP server {server!r} has no tool {tool!r}; its tools are: {', '.join(names) or '(none)'}",
            kind="unknown_mcp_tool",
            details={"server": server, "available_tools": names},
        )

    async def list_tools(self, server: str) -> tuple[MCPToolInfo, ...]:
        """List the server's tools (starting it if needed) and remember the listing."""

        async def action(session: ClientSession) -> tuple[MCPToolInfo, ...]:
            from mcp.types import PaginatedRequestParams

            found: list[MCPToolInfo] = []
            cursor: str | None = None
            for _ in range(MAX_LIST_PAGES):
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                found += [_info(t) for t in page.tools]
                cursor = page.next_cursor
                if not cursor:
                    break
            return tuple(found)

        tools: tuple[MCPToolInfo, ...] = await self.run(server, action)
        self._listings[server] = tools
        return tools

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> CallToolResult:
        async def action(session: ClientSession) -> CallToolResult:
            return await session.call_tool(tool, arguments)

        result: CallToolResult = await self.run(server, action)
        return result

    async def run(self, server: str, action: Action) -> Any:
        """Run ``action`` on the server's session, starting the server first if it is not running."""
        connection = await self._connection(self.server(server))
        return await connection.call(action)

    async def _connection(self, spec: MCPServerSpec) -> MCPConnection:
        lock = self._locks.setdefault(spec.name, asyncio.Lock())
        async with lock:
            connection = self._connections.get(spec.name)
            if connection is None:
                connection = self._connections[spec.name] = MCPConnection(spec, self.root, self._confinement())
            if not connection.alive:
                self._starts[spec.name] = self._starts.get(spec.name, 0) + 1
                await connection.start()
            return connection

    def _confinement(self) -> Confinement:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="protoagent-mcp-"))
            self._git_shim = write_git_shim(self._folder / "bin")
        return Confinement(self.sandbox, self._folder / "home", self._folder / "tmp", self._git_shim)

    def keep_output(self, call_id: str, text: str, artifacts_dir: Path | None) -> str | None:
        """Keep a long result for paging; written to the artifacts folder when there is one."""
        self._outputs[call_id] = text
        if artifacts_dir is None:
            return None
        path = artifacts_dir / "mcp" / f"{call_id}.txt"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError:
            return None
        return str(path)

    def kept_output(self, call_id: str) -> str | None:
        return self._outputs.get(call_id)

    async def aclose(self) -> None:
        """Stop every server this run started; safe to call more than once."""
        await asyncio.gather(*(c.close() for c in self._connections.values()), return_exceptions=True)
        for connection in self._connections.values():
            connection.release()
        self._connections.clear()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def _info(tool: Any) -> MCPToolInfo:
    annotations = getattr(tool, "annotations", None)
    read_only = bool(getattr(annotations, "read_only_hint", False)) if annotations is not None else False
    return MCPToolInfo(tool.name, tool.description or "", dict(tool.input_schema), read_only)


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
