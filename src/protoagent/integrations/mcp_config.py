"""MCP servers a session may use, read from ``mcp.json`` files (stdio transport only).

The data home's ``mcp.json`` holds the person's own servers; ``.protoagent/mcp.json`` in the
workspace holds the repository's and overrides a data-home server of the same name. Format::

    {"servers": {"name": {"command": ["program", "arg", ...], "env": {"KEY": "value"}}}}

A server from the workspace file is repository content: starting it for any reason needs
approval, while the person's own servers may be started to list their tools.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from protoagent.errors import ConfigError

MCP_FILE = "mcp.json"
WORKSPACE_MCP_FILE = Path(".protoagent") / MCP_FILE
SERVER_KEYS = ("command", "env", "transport")
SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
Origin = Literal["data_home", "workspace"]


@dataclass(frozen=True, slots=True)
class MCPServerSpec:
    """How to start one stdio MCP server."""

    name: str
    command: tuple[str, ...]
    """The program and its arguments; never run through a shell."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables (the SDK passes only a safe base set besides these)."""
    source: Path = Path()
    """The file that declared the server."""
    origin: Origin = "data_home"

    @property
    def trusted(self) -> bool:
        """Whether the person declared it (data home) rather than the repository."""
        return self.origin == "data_home"

    def describe(self) -> str:
        env = f"; env {', '.join(sorted(self.env))}" if self.env else ""
        return f"MCP server {self.name!r} from {self.source}: argv {json.dumps(list(self.command))}{env}"


def load_mcp_servers(root: Path, home: Path | None) -> dict[str, MCPServerSpec]:
    """Servers from the data home, then the workspace (which wins on a shared name)."""
    servers: dict[str, MCPServerSpec] = {}
    if home is not None:
        servers.update(read_mcp_file(home / MCP_FILE, "data_home"))
    servers.update(read_mcp_file(root / WORKSPACE_MCP_FILE, "workspace"))
    return servers


def read_mcp_file(path: Path, origin: Origin) -> dict[str, MCPServerSpec]:
    """The servers one file declares; a missing file declares none, a malformed one refuses."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read MCP servers ({exc}); fix the JSON or remove the file") from None
    if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
        raise ConfigError(
            f'{path}: field "servers" must be an object of named servers, e.g. '
            '{"servers": {"docs": {"command": ["docs-mcp", "--stdio"]}}}'
        )
    return {name: _server(path, origin, name, entry) for name, entry in data["servers"].items()}


def _server(path: Path, origin: Origin, name: str, entry: Any) -> MCPServerSpec:
    where = f'{path}: field "servers.{name}'
    if not SERVER_NAME.match(name):
        raise ConfigError(f'{where}": server names use letters, digits, "_", "-" and "." (at most 64); rename it')
    if not isinstance(entry, dict):
        raise ConfigError(f'{where}" must be an object with "command" (a list of strings) and optional "env"')
    unknown = sorted(set(entry) - set(SERVER_KEYS))
    if unknown:
        raise ConfigError(f'{where}" has unknown field(s) {unknown}; allowed: {", ".join(SERVER_KEYS)}')
    if entry.get("transport", "stdio") != "stdio":
        raise ConfigError(f'{where}.transport": only "stdio" is supported; remove the field or set "stdio"')
    command = entry.get("command")
    if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
        raise ConfigError(f'{where}.command" must be a non-empty list of strings, e.g. ["docs-mcp", "--stdio"]')
    env = entry.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ConfigError(f'{where}.env" must be an object of string values, e.g. {{"TOKEN_FILE": "/path"}}')
    return MCPServerSpec(name, tuple(command), dict(env), path, origin)
