"""Choosing the Python interpreter for automatic checks, by reading paths and ``pyvenv.cfg`` only.

Order: the project's ``.venv``, then the active environment (``VIRTUAL_ENV``, then a running
virtual environment), then the runtime Python. Nothing is executed, symlinks keep their spelling
(a virtual environment's ``bin/python`` is usually a link to the base interpreter, and resolving
it would lose the environment), and the harness's own host binary is never chosen.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from protoagent.checks.executables import SYSTEM_SEARCH_PATH, is_executable_file

InterpreterSource = Literal["project-venv", "active-env", "runtime"]

_PYTHON_NAME = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)*)?[a-z]?(?:\.exe)?$")
_VENV_EXECUTABLES = ("bin/python", "bin/python3", "Scripts/python.exe")


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
        return {"path": self.path, "source": self.source, "reason": self.reason}


def select_interpreter(
    root: str | os.PathLike[str],
    host_executable: str | None = sys.executable,
    *,
    host_binary: str | None = None,
    environ: Mapping[str, str] | None = None,
    prefix: str = sys.prefix,
    base_prefix: str = sys.base_prefix,
) -> Interpreter:
    """Select the interpreter for the project at ``root``.

    ``host_executable`` is the running program (``sys.executable``); it is used only if it looks
    like a Python interpreter and is not ``host_binary`` (a frozen or embedding harness binary).
    ``environ``, ``prefix`` and ``base_prefix`` default to the running process's values.
    """
    env = os.environ if environ is None else environ
    skipped: list[str] = []
    host = _usable_host(host_executable, host_binary, skipped)
    project = _project_venv(Path(os.path.abspath(root)), host_binary, skipped)
    if project is not None:
        return Interpreter(project, "project-venv", f"project virtual environment {project}")
    active = _active_env(env, host, host_binary, (prefix, base_prefix), skipped)
    if active is not None:
        return active
    return _runtime(host, base_prefix, skipped)


def _usable_host(host_executable: str | None, host_binary: str | None, skipped: list[str]) -> str | None:
    if not host_executable:
        return None
    if _same_path(host_executable, host_binary):
        skipped.append(f"host binary {host_executable} excluded")
        return None
    if not _PYTHON_NAME.match(os.path.basename(host_executable)):
        skipped.append(f"host executable {host_executable} is not a Python interpreter")
        return None
    return host_executable


def _venv_executable(venv: str, exclude: str | None) -> str | None:
    for name in _VENV_EXECUTABLES:
        candidate = os.path.join(venv, name)
        if is_executable_file(candidate) and not _same_path(candidate, exclude):
            return candidate
    return None


def _same_path(candidate: str, other: str | None) -> bool:
    return other is not None and os.path.abspath(candidate) == os.path.abspath(other)


def _project_venv(root: Path, exclude: str | None, skipped: list[str]) -> str | None:
    venv = os.path.join(root, ".venv")
    if not os.path.isdir(venv):
        return None
    if not os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
        skipped.append(".venv ignored: it has no pyvenv.cfg")
        return None
    found = _venv_executable(venv, exclude)
    if found is None:
        skipped.append(".venv ignored: it has no bin/python")
    return found


def _active_env(
    env: Mapping[str, str],
    host: str | None,
    exclude: str | None,
    prefixes: tuple[str, str],
    skipped: list[str],
) -> Interpreter | None:
    prefix, base_prefix = prefixes
    virtual_env = env.get("VIRTUAL_ENV", "")
    if virtual_env:
        found = _venv_executable(virtual_env, exclude)
        if found is not None:
            return Interpreter(found, "active-env", f"active virtual environment VIRTUAL_ENV={virtual_env}")
        skipped.append(f"VIRTUAL_ENV={virtual_env} has no bin/python")
    if os.path.abspath(prefix) != os.path.abspath(base_prefix):
        if host is not None:
            return Interpreter(host, "active-env", f"running inside the virtual environment {prefix}")
        found = _venv_executable(prefix, exclude)
        if found is not None:
            return Interpreter(found, "active-env", f"interpreter of the loaded environment {prefix}")
    return None


def _runtime(host: str | None, base_prefix: str, skipped: list[str]) -> Interpreter:
    note = f" ({'; '.join(skipped)})" if skipped else ""
    if host is not None:
        return Interpreter(host, "runtime", f"runtime Python{note}")
    for name in ("bin/python3", "bin/python"):
        candidate = os.path.join(base_prefix, name)
        if is_executable_file(candidate):
            return Interpreter(candidate, "runtime", f"base Python of the runtime{note}")
    found = shutil.which("python3", path=os.pathsep.join(SYSTEM_SEARCH_PATH))
    if found is not None:
        return Interpreter(found, "runtime", f"python3 on the fixed system search path{note}")
    return Interpreter("python3", "runtime", f"no Python interpreter found{note}")
