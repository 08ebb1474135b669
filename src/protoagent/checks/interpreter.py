"""Choosing the Python interpreter for automatic checks, by reading paths and manifests only.

Order: the project's own environment (``.venv``, ``venv``, then Poetry's and Hatch's environments
for the project, found statically), then the user's active environment from the environment
ProtoAgent was started in (``VIRTUAL_ENV``, then ``CONDA_PREFIX``), then ``python3`` on the user's
``PATH``. The interpreter ProtoAgent itself runs in is never borrowed for its own sake: it is chosen
only when it is one of those. Nothing is executed, and symlinks keep their spelling (a virtual
environment's ``bin/python`` is usually a link to the base interpreter, and resolving it would
lose the environment).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from protoagent.checks.executables import is_executable_file
from protoagent.json_form import json_form

InterpreterSource = Literal["project-venv", "active-env", "user-path", "none"]

_VENV_EXECUTABLES = ("bin/python", "bin/python3", "Scripts/python.exe")
_PROJECT_VENVS = (".venv", "venv")
_MAX_MANIFEST_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class Interpreter:
    """The interpreter automatic Python checks run under."""

    path: str
    """Executable path as spelled on disk (absolute, symlinks not resolved); bare only if none found."""
    source: InterpreterSource
    """Which rule chose it."""
    reason: str
    """Why, in one sentence (including candidates that were skipped)."""

    def to_json(self) -> dict[str, str]:
        """Plain JSON-ready dict."""
        return json_form(self)


def select_interpreter(
    root: str | os.PathLike[str],
    *,
    environ: Mapping[str, str] | None = None,
    home: str | os.PathLike[str] | None = None,
) -> Interpreter:
    """Select the interpreter for the project at ``root``.

    ``environ`` is the environment ProtoAgent was started in (default: this process's);
    ``home`` is the user's home folder, where Poetry and Hatch keep their environments.
    """
    env = os.environ if environ is None else environ
    user_home = Path(home) if home is not None else Path(env.get("HOME") or os.path.expanduser("~"))
    skipped: list[str] = []
    workspace = Path(os.path.abspath(root))
    project = _project_env(workspace, user_home, env, skipped)
    if project is not None:
        return project
    active = _active_env(env, skipped)
    if active is not None:
        return active
    return _user_path(env, skipped)


def _venv_executable(venv: str) -> str | None:
    for name in _VENV_EXECUTABLES:
        candidate = os.path.join(venv, name)
        if is_executable_file(candidate):
            return candidate
    return None


def _project_env(root: Path, home: Path, env: Mapping[str, str], skipped: list[str]) -> Interpreter | None:
    for folder in _PROJECT_VENVS:
        venv = os.path.join(root, folder)
        if not os.path.isdir(venv):
            continue
        if not os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
            skipped.append(f"{folder} ignored: it has no pyvenv.cfg")
            continue
        found = _venv_executable(venv)
        if found is not None:
            return Interpreter(found, "project-venv", f"project virtual environment {found}")
        skipped.append(f"{folder} ignored: it has no bin/python")
    project = _project_name(root)
    if project is None:
        return None
    for tool, pattern in _tool_env_patterns(project, home, env):
        for venv in sorted(glob.glob(pattern)):
            found = _venv_executable(venv)
            if found is not None:
                return Interpreter(found, "project-venv", f"{tool} environment of project {project!r}: {found}")
    return None


def _project_name(root: Path) -> str | None:
    """The project's name from ``pyproject.toml`` (``[project]`` or ``[tool.poetry]``), read statically."""
    manifest = root / "pyproject.toml"
    try:
        if manifest.stat().st_size > _MAX_MANIFEST_BYTES or not manifest.is_file():
            return None
        data = tomllib.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    project = data.get("project")
    poetry = data.get("tool", {}).get("poetry") if isinstance(data.get("tool"), dict) else None
    for table in (project, poetry):
        if isinstance(table, dict) and isinstance(table.get("name"), str) and table["name"].strip():
            return str(table["name"]).strip()
    return None


def _tool_env_patterns(name: str, home: Path, env: Mapping[str, str]) -> list[tuple[str, str]]:
    """Where Poetry (``{cache}/virtualenvs/{name}-{hash}-py{version}``) and Hatch
    (``{data}/env/virtual/{name}/{hash}/{env}``) put a project's environments."""
    normal = re.sub(r"[-_.]+", "-", name).lower()
    safe = glob.escape(normal)
    cache = Path(env.get("XDG_CACHE_HOME") or home / ".cache")
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")
    configured = env.get("POETRY_VIRTUALENVS_PATH")
    poetry = Path(configured) if configured else cache / "pypoetry" / "virtualenvs"
    return [
        ("Poetry", str(poetry / f"{safe}-*-py*")),
        ("Hatch", str(data / "hatch" / "env" / "virtual" / safe / "*" / safe)),
    ]


def _active_env(env: Mapping[str, str], skipped: list[str]) -> Interpreter | None:
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = env.get(variable, "")
        if not prefix:
            continue
        found = _venv_executable(prefix)
        if found is not None:
            return Interpreter(found, "active-env", f"active environment {variable}={prefix}")
        skipped.append(f"{variable}={prefix} has no bin/python")
    return None


def _user_path(env: Mapping[str, str], skipped: list[str]) -> Interpreter:
    note = f" ({'; '.join(skipped)})" if skipped else ""
    search = env.get("PATH", "")
    directories = [d for d in search.split(os.pathsep) if os.path.isabs(d)]
    for name in ("python3", "python"):
        found = shutil.which(name, path=os.pathsep.join(directories)) if directories else None
        if found is not None:
            return Interpreter(found, "user-path", f"{name} on the user's PATH{note}")
    return Interpreter("python3", "none", f"no Python interpreter found in the project or on the user's PATH{note}")
