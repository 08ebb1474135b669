"""Editing MCP files (``mcp add|remove|enable|disable``) without losing anything else in them.

The file is read as JSON, only the named server's entry changes, and the result replaces the
file atomically; other servers, other shapes and unknown fields stay as they were. New servers
go into the ``mcpServers`` shape that other agents read too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protoagent.atomic_files import replace_file
from protoagent.errors import ConfigError
from protoagent.integrations.mcp_config import SERVER_NAME, SHAPES, read_raw


def _load(path: Path) -> dict[str, Any]:
    try:
        return read_raw(path)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def _shape_holding(data: dict[str, Any], name: str) -> str | None:
    for shape in SHAPES:
        entries = data.get(shape)
        if isinstance(entries, dict) and name in entries:
            return shape
    return None


def add_server(path: Path, name: str, entry: dict[str, Any], *, replace: bool = False) -> None:
    """Declare ``name`` in ``path`` (created if missing); an existing one needs ``replace``."""
    if not SERVER_NAME.match(name):
        raise ConfigError(f"server name {name!r}: use letters, digits, '_', '-' and '.' (at most 64)")
    data = _load(path)
    shape = _shape_holding(data, name)
    if shape is not None and not replace:
        raise ConfigError(f"{path} already declares MCP server {name!r}; remove it first or pass --replace")
    target = shape or "mcpServers"
    entries = data.setdefault(target, {})
    if not isinstance(entries, dict):
        raise ConfigError(f'{path}: field "{target}" is not an object; fix the file first')
    entries[name] = entry
    write_json(path, data)


def remove_server(path: Path, name: str) -> None:
    data = _load(path)
    shape = _shape_holding(data, name)
    if shape is None:
        raise ConfigError(f"{path} declares no MCP server {name!r}; see 'protoagent mcp list'")
    del data[shape][name]
    write_json(path, data)


def set_disabled(path: Path, name: str, disabled: bool) -> None:
    data = _load(path)
    shape = _shape_holding(data, name)
    if shape is None:
        raise ConfigError(f"{path} declares no MCP server {name!r}; see 'protoagent mcp list'")
    entry = data[shape][name]
    if not isinstance(entry, dict):
        raise ConfigError(f'{path}: field "{shape}.{name}" is not an object; fix the file first')
    if disabled:
        entry["disabled"] = True
    else:
        entry.pop("disabled", None)
    write_json(path, data)


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as indented JSON: readers see the old or the new file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, json.dumps(data, indent=2) + "\n", prefix=path.name, suffix=".tmp")
