"""User settings kept in the data home (``settings.json``): optional agents on or off."""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from protoagent.atomic_files import replace_file
from protoagent.errors import ConfigError
from protoagent.private_files import private_dir, tighten

OPTIONAL_AGENTS = {"tester": True, "scout": False, "mcp": False}
"""Optional agents and whether they are on by default."""
SETTINGS_FILE = "settings.json"


def read_small_file(path: Path, limit: int = 1 << 20) -> bytes:
    """A regular file's bytes, at most ``limit``; a FIFO, device or folder raises OSError at once."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        if info.st_size > limit:
            raise OSError(errno.EFBIG, f"larger than {limit} bytes")
        return os.read(fd, limit + 1)
    finally:
        os.close(fd)


def _path(home: Path) -> Path:
    return home / SETTINGS_FILE


def load_settings(home: Path) -> dict[str, Any]:
    path = _path(home)
    if not path.exists():
        return {}
    tighten(path)  # settings written before they were private
    try:
        data = json.loads(read_small_file(path).decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read settings ({exc.strerror or exc}); fix or remove the file") from None
    except (ValueError, RecursionError) as exc:
        problem = "nested too deeply" if isinstance(exc, RecursionError) else f"not UTF-8 JSON: {exc}"
        raise ConfigError(f"{path}: cannot read settings ({problem}); fix or remove the file") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: settings must be a JSON object; fix or remove the file")
    return data


def agent_enabled(home: Path, name: str) -> bool:
    agents = load_settings(home).get("agents", {})
    value = agents.get(name, OPTIONAL_AGENTS[name]) if isinstance(agents, dict) else OPTIONAL_AGENTS[name]
    return bool(value)


def disabled_agents(home: Path | None) -> frozenset[str]:
    """Agent ids (and optional agents) the user turned off; a read, nothing is created."""
    if home is None:
        return frozenset()
    agents = load_settings(home).get("agents", {})
    off = {str(k) for k, v in agents.items() if v is False} if isinstance(agents, dict) else set()
    return frozenset(off | {name for name, default in OPTIONAL_AGENTS.items() if not default and name not in agents})


def set_agent(home: Path, name: str, enabled: bool, known: frozenset[str] = frozenset()) -> None:
    """Turn an optional agent (or a ``known`` agent id) on or off; the file is replaced atomically."""
    if name not in OPTIONAL_AGENTS and name not in known:
        choices = ", ".join(sorted({*OPTIONAL_AGENTS, *known}))
        raise ConfigError(f"unknown agent {name!r}; choose one of: {choices}")
    data = load_settings(home)
    agents = data.setdefault("agents", {})
    agents[name] = enabled
    private_dir(home)
    replace_file(_path(home), json.dumps(data, indent=2) + "\n")
