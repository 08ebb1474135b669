"""MCP servers a run may use, read from the MCP files people already have.

Files, in order: the person's own ``<data home>/mcp.json``, then the repository's
``.mcp.json`` and ``.protoagent/mcp.json``. Each holds servers in either shape::

    {"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "${TZ:-UTC}"}}}}
    {"servers": {"time": {"command": ["mcp-server-time"]}}}

A server has ``command``/``args``/``env``/``cwd`` (stdio) or ``url``/``headers`` with
``type`` (``http`` or ``sse``), and optionally ``disabled``, ``timeout`` (seconds),
``max_output`` (characters), ``allow``/``deny`` (tool names) and, in the person's own file
only, ``trusted`` (all its tools) or ``trusted_tools``: calls that ``--approval auto`` may run
without asking. ``${VAR}`` and ``${VAR:-default}`` expand in ``env``, ``args``, ``url`` and
``headers`` from the environment ProtoAgent started in; in a repository's file only the
variables the person allowed for that server expand (``allowed_env``), others take their
default or leave the server out. What a server is shown as (``describe``) is what the file
says, never an expanded value. Unknown fields are ignored (and kept
when the files are edited). A bad server or a bad file is a diagnostic, never a refusal: the
run goes on without it. On a name collision the earlier file's server is kept: the person's
own server is never replaced by the repository's.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from protoagent.integrations.mcp_expand import ExpansionError, expand, references
from protoagent.workspace.confined import RefusedRead, read_confined

MCP_FILE = "mcp.json"
WORKSPACE_MCP_FILE = Path(".protoagent") / MCP_FILE
PROJECT_MCP_FILES = (Path(".mcp.json"), WORKSPACE_MCP_FILE)
SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
SHAPES = ("mcpServers", "servers")
MAX_MCP_FILE_BYTES = 1 << 20
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_OUTPUT = 24_000
"""Characters of one result the model sees (about 6k tokens); the rest is kept as an artifact."""
Origin = Literal["data_home", "workspace"]
Transport = Literal["stdio", "http", "sse"]
TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}


@dataclass(frozen=True, slots=True)
class Written:
    """A server's endpoint exactly as its file writes it."""

    command: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    url: str = ""

    def fingerprint(self) -> dict[str, Any]:
        return {"command": list(self.command), "env": self.env, "headers": self.headers, "url": self.url}


@dataclass(frozen=True, slots=True)
class MCPServerSpec:
    """How to reach one MCP server, and what the person allows of it."""

    name: str
    command: tuple[str, ...] = ()
    """The program and its arguments (stdio); never run through a shell."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment variables (the SDK passes only a safe base set besides these)."""
    source: Path = Path()
    """The file that declared the server."""
    origin: Origin = "data_home"
    transport: Transport = "stdio"
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    disabled: bool = False
    trusted_all: bool = False
    trusted_tools: tuple[str, ...] = ()
    allow: tuple[str, ...] | None = None
    deny: tuple[str, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_output: int = DEFAULT_MAX_OUTPUT
    written: Written | None = None
    """The endpoint as the file writes it (``${VAR}`` unexpanded): what approvals show and trust pins."""

    @property
    def trusted(self) -> bool:
        """Whether the person declared it (data home) rather than the repository."""
        return self.origin == "data_home"

    def call_trusted(self, tool: str) -> bool:
        """Whether the person's configuration trusts calls of ``tool`` (never a repository's)."""
        return self.trusted and (self.trusted_all or tool in self.trusted_tools)

    def tool_allowed(self, tool: str) -> bool:
        return tool not in self.deny and (self.allow is None or tool in self.allow)

    @property
    def as_written(self) -> Written:
        return self.written or Written(self.command, dict(self.env), dict(self.headers), self.url)

    def target(self) -> str:
        """What the server runs or reaches, as written: ``argv [...]`` or ``http URL``."""
        written = self.as_written
        if self.transport == "stdio":
            return f"argv {json.dumps(list(written.command))}"
        return f"{self.transport} {written.url}"

    def describe(self) -> str:
        """Everything that will be run or sent, as the file writes it; the person's own literal
        env and header values are shown as ``***`` (a repository's are shown: they are its own)."""
        written = self.as_written
        parts = [f"MCP server {self.name!r} from {self.source}: {self.target()}"]
        if self.cwd:
            parts.append(f"cwd {self.cwd}")
        if written.env:
            parts.append("env " + ", ".join(f"{k}={self._shown(v)}" for k, v in sorted(written.env.items())))
        if written.headers:
            parts.append("headers " + ", ".join(f"{k}: {self._shown(v)}" for k, v in sorted(written.headers.items())))
        return "; ".join(parts)

    def _shown(self, value: str) -> str:
        if self.origin == "workspace" or references(value):
            return value
        return "***"


@dataclass(frozen=True, slots=True)
class MCPConfig:
    """The servers of one run, and what was wrong with the files (one line each)."""

    servers: dict[str, MCPServerSpec]
    diagnostics: tuple[str, ...] = ()

    @property
    def enabled(self) -> dict[str, MCPServerSpec]:
        return {name: spec for name, spec in self.servers.items() if not spec.disabled}


def config_files(root: Path, home: Path | None) -> list[tuple[Path, Origin]]:
    """Every file that may declare servers, the person's own first."""
    files: list[tuple[Path, Origin]] = [(home / MCP_FILE, "data_home")] if home is not None else []
    return files + [(root / rel, "workspace") for rel in PROJECT_MCP_FILES]


AllowedEnv = Mapping[str, Iterable[str]]
"""Server name -> the variables of the person's environment a repository's file may expand for it."""


def load_mcp_config(
    root: Path,
    home: Path | None,
    environ: Mapping[str, str] | None = None,
    *,
    disabled: bool = True,
    allowed_env: AllowedEnv | None = None,
) -> MCPConfig:
    """Servers from every file (earlier files win a name); problems become diagnostics.

    With ``disabled`` false, disabled servers are left out. Repository files expand only the
    variables ``allowed_env`` names for each server (none when it is not given)."""
    env = os.environ if environ is None else environ
    servers: dict[str, MCPServerSpec] = {}
    diagnostics: list[str] = []
    for path, origin in config_files(root, home):
        fence = root if origin == "workspace" else None
        found, problems = read_mcp_file(path, origin, env, allowed_env or {}, fence=fence)
        diagnostics += problems
        for name, spec in found.items():
            kept = servers.get(name)
            if kept is not None:
                diagnostics.append(
                    f"{path}: MCP server {name!r} is already declared in {kept.source}; "
                    f"that one is kept and this one is ignored (rename it to use both)"
                )
                continue
            if disabled or not spec.disabled:
                servers[name] = spec
    return MCPConfig(servers, tuple(diagnostics))


def read_raw(path: Path, fence: Path | None = None) -> dict[str, Any]:
    """A file's JSON object (empty when missing); raises ``ValueError`` with the reason.

    Read beneath ``fence`` (a repository's file: the repository; else its own folder): never
    through a link out of it, never blocking on a FIFO."""
    if not os.path.lexists(path):
        return {}
    try:
        data = json.loads(read_confined(fence or path.parent, path, limit=MAX_MCP_FILE_BYTES).decode("utf-8"))
    except RefusedRead as exc:
        raise ValueError(f"{path}: {exc.reason}; replace it with a JSON file") from None
    except RecursionError:
        raise ValueError(f"{path}: the JSON is nested too deeply; fix the file or remove it") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: cannot read MCP servers ({exc}); fix the JSON or remove the file") from None
    if not isinstance(data, dict):
        raise ValueError(f'{path}: an MCP file must be a JSON object such as {{"mcpServers": {{...}}}}')
    return data


def read_mcp_file(
    path: Path,
    origin: Origin,
    environ: Mapping[str, str],
    allowed_env: AllowedEnv | None = None,
    *,
    fence: Path | None = None,
) -> tuple[dict[str, MCPServerSpec], list[str]]:
    """The servers one file declares and its problems; a missing file declares none."""
    try:
        data = read_raw(path, fence)
    except ValueError as exc:
        return {}, [str(exc)]
    servers: dict[str, MCPServerSpec] = {}
    problems: list[str] = []
    for shape in SHAPES:
        if shape not in data:
            continue
        entries = data[shape]
        if not isinstance(entries, dict):
            problems.append(f'{path}: field "{shape}" must be an object of named servers; it is ignored')
            continue
        for name, entry in entries.items():
            try:
                allowed = None if origin == "data_home" else frozenset((allowed_env or {}).get(name, ()))
                servers[name] = parse_server(path, origin, shape, name, entry, _Environ(environ, True, allowed))
            except ValueError as exc:
                problems.append(f"{exc}; server {name!r} is left out")
    return servers, problems


def parse_server(path: Path, origin: Origin, shape: str, name: str, entry: Any, environ: _Environ) -> MCPServerSpec:
    """One server entry; raises ``ValueError`` naming file, field and fix."""
    where = f'{path}: field "{shape}.{name}'
    if not isinstance(name, str) or not SERVER_NAME.match(name):
        raise ValueError(f'{where}": server names use letters, digits, "_", "-" and "." (at most 64)')
    if not isinstance(entry, dict):
        raise ValueError(f'{where}" must be an object with "command" or "url"')
    try:
        transport = _transport(where, entry)
        disabled = _bool(where, entry, "disabled")
        fields = _endpoint(where, transport, entry, replace(environ, strict=not disabled))
    except ExpansionError as exc:
        raise ValueError(f'{where}": {exc}') from None
    trusted_all = _bool(where, entry, "trusted")
    trusted_tools = _names(where, entry, "trusted_tools") or ()
    if origin == "workspace" and (trusted_all or trusted_tools):
        trusted_all, trusted_tools = False, ()  # a repository cannot trust itself
    return MCPServerSpec(
        name,
        source=path,
        origin=origin,
        transport=transport,
        disabled=disabled,
        trusted_all=trusted_all,
        trusted_tools=trusted_tools,
        allow=_names(where, entry, "allow"),
        deny=_names(where, entry, "deny") or (),
        timeout_s=_number(where, entry, "timeout", DEFAULT_TIMEOUT_S),
        max_output=int(_number(where, entry, "max_output", DEFAULT_MAX_OUTPUT)),
        **fields,
    )


def _transport(where: str, entry: dict[str, Any]) -> Transport:
    kind = entry.get("type", entry.get("transport"))
    if kind is None:
        return "http" if "url" in entry and "command" not in entry else "stdio"
    if kind not in TRANSPORTS:
        raise ValueError(f'{where}.type": {kind!r} is not a transport; use "stdio", "http" or "sse"')
    return TRANSPORTS[kind]


@dataclass(frozen=True, slots=True)
class _Environ:
    values: Mapping[str, str]
    strict: bool
    allowed: frozenset[str] | None
    """The variables a repository's file may read for this server; ``None``: any (the person's file)."""

    def expand(self, value: str) -> str:
        return expand(value, self.values, strict=self.strict, allowed=self.allowed)


def _endpoint(where: str, transport: Transport, entry: dict[str, Any], environ: _Environ) -> dict[str, Any]:
    if transport != "stdio":
        url = entry.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ValueError(f'{where}.url" must be an http(s) URL for a {transport} server')
        headers = _strings(where, entry, "headers")
        written = Written(headers=headers, url=url)
        expanded = {k: environ.expand(v) for k, v in headers.items()}
        return {"url": environ.expand(url), "headers": expanded, "written": written}
    command = entry.get("command")
    if isinstance(command, str) and command:
        command = [command]
    if not isinstance(command, list) or not command or not all(isinstance(a, str) and a for a in command):
        raise ValueError(f'{where}.command" must be a program name or a non-empty list of strings')
    args = entry.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError(f'{where}.args" must be a list of strings')
    cwd = entry.get("cwd", "")
    if not isinstance(cwd, str):
        raise ValueError(f'{where}.cwd" must be a directory path')
    written_env = _strings(where, entry, "env")
    env = {k: environ.expand(v) for k, v in written_env.items()}
    argv = (*command, *(environ.expand(a) for a in args))
    return {"command": argv, "env": env, "cwd": cwd, "written": Written((*command, *args), written_env)}


def _strings(where: str, entry: dict[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key, {})
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ValueError(f'{where}.{key}" must be an object of string values')
    return dict(value)


def _names(where: str, entry: dict[str, Any], key: str) -> tuple[str, ...] | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f'{where}.{key}" must be a list of tool names')
    return tuple(value)


def _bool(where: str, entry: dict[str, Any], key: str) -> bool:
    value = entry.get(key, False)
    if not isinstance(value, bool):
        raise ValueError(f'{where}.{key}" must be true or false')
    return value


def _number(where: str, entry: dict[str, Any], key: str, default: float) -> float:
    value = entry.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f'{where}.{key}" must be a positive number')
    return float(value)
