"""ProtoAgent's configuration, resolved in one module: its layers and the user settings file.

Layers, each overriding the one before only where it sets a value: built-in defaults < user
settings (``settings.json`` in the data home: optional agents on or off) < the project
(``.protoagent/project.json``, read by ``checks.project``) < the environment (``PROTOAGENT_*``
variables, read here and nowhere else, by ``environment``) < flags (``RunOptions``, built once by
``workflow.run_options.run_options``).
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protoagent.atomic_files import replace_file
from protoagent.errors import ConfigError
from protoagent.events.stores import STORE_ENV
from protoagent.private_files import private_dir, tighten

HOME_ENV = "PROTOAGENT_HOME"
ADMIN_SKILLS_ENV = "PROTOAGENT_ADMIN_SKILLS"
SANDBOX_BACKENDS_ENV = "PROTOAGENT_SANDBOX_BACKENDS"
SEARCH_URL_ENV = "PROTOAGENT_SEARCH_URL"
LOCAL_PROBE_ENV = "PROTOAGENT_LOCAL_PROBE"
CODER_WINDOWS_ENV = "PROTOAGENT_CODER_MAX_WINDOWS"
RUN_SECONDS_ENV = "PROTOAGENT_RUN_SECONDS"
ARTIFACT_CAP_ENV = "PROTOAGENT_ARTIFACT_CAP_BYTES"
SESSION_CAP_ENV = "PROTOAGENT_SESSION_ARTIFACTS_CAP_BYTES"
TOKEN_ENV = "PROTOAGENT_TOKEN"


@dataclass(frozen=True, slots=True)
class Environment:
    """The environment layer: every ``PROTOAGENT_*`` configuration variable, parsed."""

    home: Path
    """The data home: ``$PROTOAGENT_HOME``, else ``~/.protoagent``."""
    store: str | None
    """``$PROTOAGENT_STORE``: a ``postgresql://`` URL or a SQLite path (``None``: the data home's)."""
    admin_skills: str | None
    """``$PROTOAGENT_ADMIN_SKILLS``: the administrator's skill root (``""``: none; ``None``: the default)."""
    sandbox_backends: frozenset[str] | None
    """``$PROTOAGENT_SANDBOX_BACKENDS``: the sandbox backends allowed (``None``: the defaults)."""
    search_url: str | None
    """``$PROTOAGENT_SEARCH_URL``: Scout's search endpoint."""
    local_probe: bool
    """``$PROTOAGENT_LOCAL_PROBE``: probe the local model first (``off``, ``0``, ``false``, ``no``: not)."""
    coder_windows: int | None
    """``$PROTOAGENT_CODER_MAX_WINDOWS`` clamped to 1–3 (``None``: unset or not a number)."""
    run_seconds: float | None
    """``$PROTOAGENT_RUN_SECONDS`` (0 or less: no time limit; ``None``: unset or not a number)."""
    artifact_cap: str
    """``$PROTOAGENT_ARTIFACT_CAP_BYTES`` as given (``processes.artifact_cap`` checks it)."""
    session_artifacts_cap: str
    """``$PROTOAGENT_SESSION_ARTIFACTS_CAP_BYTES`` as given."""
    token: str
    """``$PROTOAGENT_TOKEN`` as given: the web server's access token (``""``: none)."""


def environment(environ: Mapping[str, str] | None = None) -> Environment:
    """The environment layer of ``environ`` (default: this process's environment)."""
    env = os.environ if environ is None else environ
    home = env.get(HOME_ENV)
    backends = env.get(SANDBOX_BACKENDS_ENV)
    windows = env.get(CODER_WINDOWS_ENV, "").strip()
    return Environment(
        home=Path(home).expanduser() if home else Path.home() / ".protoagent",
        store=env.get(STORE_ENV) or None,
        admin_skills=env.get(ADMIN_SKILLS_ENV),
        sandbox_backends=None if backends is None else frozenset(p.strip() for p in backends.split(",") if p.strip()),
        search_url=env.get(SEARCH_URL_ENV) or None,
        local_probe=env.get(LOCAL_PROBE_ENV, "on").strip().lower() not in ("off", "0", "false", "no"),
        coder_windows=max(1, min(3, int(windows))) if windows.lstrip("-").isdigit() else None,
        run_seconds=_number(env.get(RUN_SECONDS_ENV, "")),
        artifact_cap=env.get(ARTIFACT_CAP_ENV, "").strip(),
        session_artifacts_cap=env.get(SESSION_CAP_ENV, "").strip(),
        token=env.get(TOKEN_ENV, ""),
    )


def _number(raw: str) -> float | None:
    try:
        return float(raw.strip())
    except ValueError:
        return None


def data_home() -> Path:
    """Where ProtoAgent keeps its data: ``$PROTOAGENT_HOME`` or ``~/.protoagent``."""
    return environment().home


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
