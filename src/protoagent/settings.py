"""User settings kept in the data home (``settings.json``): optional agents on or off."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from protoagent.errors import ConfigError

OPTIONAL_AGENTS = {"tester": True, "scout": False, "mcp": False}
"""Optional agents and whether they are on by default."""
SETTINGS_FILE = "settings.json"


def _path(home: Path) -> Path:
    return home / SETTINGS_FILE


def load_settings(home: Path) -> dict[str, Any]:
    path = _path(home)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read settings ({exc}); fix or remove the file") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: settings must be a JSON object; fix or remove the file")
    return data


def agent_enabled(home: Path, name: str) -> bool:
    agents = load_settings(home).get("agents", {})
    value = agents.get(name, OPTIONAL_AGENTS[name]) if isinstance(agents, dict) else OPTIONAL_AGENTS[name]
    return bool(value)


def set_agent(home: Path, name: str, enabled: bool) -> None:
    """Turn an optional agent on or off; the file is replaced atomically."""
    if name not in OPTIONAL_AGENTS:
        raise ConfigError(f"unknown optional agent {name!r}; choose one of: {', '.join(OPTIONAL_AGENTS)}")
    data = load_settings(home)
    agents = data.setdefault("agents", {})
    agents[name] = enabled
    home.mkdir(parents=True, exist_ok=True)
    tmp = _path(home).with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, _path(home))
