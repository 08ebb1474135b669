"""MCP server settings shared by ``protoagent mcp`` and the settings API: which file a scope
writes, and the entry ``add`` declares. A repository cannot trust its own servers: ``trusted``
is for the person's own file only."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from protoagent.errors import ConfigError

MCP_FILE = "mcp.json"
PROJECT_FILE = ".mcp.json"


def mcp_file(project: bool, repo: Path, home: Path) -> Path:
    """The user's ``mcp.json`` under the data home, or the repository's ``.mcp.json``."""
    return repo.resolve() / PROJECT_FILE if project else home / MCP_FILE


def _pairs(items: Sequence[str], sep: str, what: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise ConfigError(f"{what} {item!r}: write it as KEY{sep}VALUE")
        pairs[key.strip()] = value.strip() if sep == ":" else value
    return pairs


def server_entry(
    command: Sequence[str],
    url: str | None,
    transport: str,
    env: Sequence[str],
    header: Sequence[str],
    trusted: bool,
    project: bool = False,
) -> dict[str, Any]:
    """The entry ``mcp add`` writes: a command (stdio) or a URL (http/sse), env, headers, trust."""
    if trusted and project:
        raise ConfigError("--trusted is for your own file only: a repository cannot trust its own servers")
    if bool(command) == bool(url):
        raise ConfigError(
            "give either a command (after --) or --url, e.g. 'protoagent mcp add time -- mcp-server-time'"
        )
    entry: dict[str, Any] = {}
    if url:
        entry = {"type": transport or "http", "url": url}
        if header:
            entry["headers"] = _pairs(header, "=", "header")
    else:
        entry = {"command": command[0], "args": list(command[1:])}
        if transport and transport != "stdio":
            raise ConfigError(f"--type {transport} needs --url, not a command")
    if env:
        entry["env"] = _pairs(env, "=", "--env")
    if trusted:
        entry["trusted"] = True
    return entry
