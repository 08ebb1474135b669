"""Command preparation: a call's argv, cwd, env and limits become one exact, frozen PreparedCommand.

Preparation is pure: it reads the filesystem to resolve paths but starts nothing and writes
nothing. Everything it refuses raises ``ToolRejected`` before any approval is asked.

Environment rules. The child never inherits the harness's environment. It gets a fixed minimal
set (``LANG=C.UTF-8``, ``PYTHONDONTWRITEBYTECODE=1`` and ``HOME`` pointing at a session-scoped
folder, so tools that write caches or dotfiles never touch the real home) plus exactly the
variables the call names.
Because nothing is inherited, credentials in the parent environment (``*KEY*``, ``*TOKEN*``,
``*SECRET*``, ``*PASSWORD*`` ...) reach the child only when the call names them with a value.
``PATH`` is set only when the call names it.

Executable resolution. A name containing ``/`` is a path: absolute as given, relative ones
beneath the workspace root (``.venv/bin/python``), never resolving symlinks so a virtual
environment keeps working. ``python``/``python3`` without a named ``PATH`` use the session's
interpreter selection. Any other bare name is searched in the call's ``PATH`` or, without one,
in the fixed system search path ``SYSTEM_PATH`` (relative ``PATH`` entries are ignored).
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from protoagent.errors import ToolRejected
from protoagent.processes.sandbox import SandboxScope

DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 3600.0
DEFAULT_OUTPUT_LIMIT = 8192
MAX_OUTPUT_LIMIT = 1 << 20
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
"""Where bare program names are found when the call does not name ``PATH``."""
BASE_ENV: Mapping[str, str] = {"LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
"""Python must not leave bytecode caches behind: a cache written by one run can hide an edit
made within the same second that keeps the file's size (the cache is keyed on mtime and size)."""
"""Variables every child gets (``HOME`` is added per session); a call's env overrides them."""
PYTHON_NAMES = frozenset({"python", "python3"})

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class CommandSandbox(Protocol):
    """How a prepared argv is confined (see ``processes.sandbox``). ``wrap`` returns the argv
    that is actually spawned; ``scope`` says where the command may write."""

    @property
    def name(self) -> str: ...

    def wrap(self, argv: tuple[str, ...], scope: SandboxScope) -> tuple[str, ...]: ...


@dataclass(frozen=True, slots=True)
class NoSandbox:
    """The sandbox of a session wired without one: the argv runs as prepared, unconfined.
    ``run_task`` always selects one through ``processes.sandbox.select_sandbox``."""

    name: str = "none"

    def wrap(self, argv: tuple[str, ...], scope: SandboxScope) -> tuple[str, ...]:
        return argv


NO_SANDBOX = NoSandbox()


@dataclass(frozen=True, slots=True)
class CommandRequest:
    """What a call asks for, exactly as the model (or a check) spelled it."""

    argv: Sequence[str]
    cwd: str = "."
    """Project-relative working directory (an absolute one must lie inside the root)."""
    env: Mapping[str, str] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S
    output_limit: int = DEFAULT_OUTPUT_LIMIT
    """Bytes of output an observation may show; the full output stays in the artifact."""


@dataclass(frozen=True, slots=True)
class CommandSite:
    """Facts of the session a command is prepared in."""

    root: Path
    """The workspace root, already resolved."""
    home: Path
    """The session-scoped folder the child sees as ``HOME``."""
    python: str
    """The selected interpreter (absolute, or relative to the root)."""
    sandbox: CommandSandbox = NO_SANDBOX

    @property
    def tmp(self) -> Path:
        """The session's temp folder, beside ``home`` (a sandboxed command sees it as ``/tmp``)."""
        return self.home.parent / "tmp"


@dataclass(frozen=True, slots=True)
class PreparedCommand:
    """An exact command: what the approver sees is what is spawned."""

    executable: str
    argv: tuple[str, ...]
    """The full argv; ``argv[0]`` is the absolute executable."""
    cwd: Path
    env: tuple[tuple[str, str], ...]
    """The child's complete environment, sorted by name."""
    timeout_s: float
    output_limit: int
    sandbox: CommandSandbox = NO_SANDBOX
    root: Path | None = None
    """The workspace root (None: the cwd); with ``home`` and ``tmp``, where a sandbox lets it write."""
    home: Path | None = None
    tmp: Path | None = None

    @property
    def environment(self) -> dict[str, str]:
        return dict(self.env)

    @property
    def scope(self) -> SandboxScope:
        home = self.home or Path(self.environment.get("HOME", self.cwd))
        return SandboxScope(self.root or self.cwd, home, self.tmp or home.parent / "tmp", self.cwd)

    def spawn_argv(self) -> tuple[str, ...]:
        """The argv handed to the operating system, after its sandbox wrapped it."""
        return self.sandbox.wrap(self.argv, self.scope)

    def preview(self) -> str:
        """Approval text: absolute executable, argv, cwd, environment, limits and sandbox."""
        env = " ".join(f"{name}={shlex.quote(value)}" for name, value in self.env)
        return "\n".join(
            [
                f"run: {shlex.join(self.argv)}",
                f"executable: {self.executable}",
                f"argv: {json.dumps(list(self.argv))}",
                f"cwd: {self.cwd}",
                f"env: {env}",
                f"timeout: {self.timeout_s:g} s",
                f"output limit: {self.output_limit} bytes",
                f"sandbox: {self.sandbox.name}",
            ]
        )


def prepare_command(request: CommandRequest, site: CommandSite) -> PreparedCommand:
    """Validate ``request`` against the live workspace and freeze the exact command."""
    _check_limits(request.timeout_s, request.output_limit)
    argv = _check_argv(request.argv)
    call_env = _check_env(request.env)
    cwd = resolve_cwd(request.cwd, site.root)
    executable = resolve_executable(argv[0], call_env, site)
    env = {**BASE_ENV, "HOME": str(site.home), **call_env}
    return PreparedCommand(
        executable=executable,
        argv=(executable, *argv[1:]),
        cwd=cwd,
        env=tuple(sorted(env.items())),
        timeout_s=float(request.timeout_s),
        output_limit=request.output_limit,
        sandbox=site.sandbox,
        root=site.root,
        home=site.home,
        tmp=site.tmp,
    )


def resolve_cwd(cwd: str, root: Path) -> Path:
    """The absolute working directory beneath ``root``; escapes and missing folders are refused."""
    candidate = (root / cwd).resolve()
    if not candidate.is_relative_to(root):
        raise ToolRejected(
            f"cwd {cwd!r} lies outside the workspace root {str(root)!r}; use a project-relative folder",
            kind="path_outside_workspace",
            details={"cwd": cwd},
        )
    if not candidate.is_dir():
        raise ToolRejected(
            f"cwd {cwd!r} is not an existing folder in the workspace",
            kind="missing_cwd",
            details={"cwd": cwd},
        )
    return candidate


def resolve_executable(program: str, call_env: Mapping[str, str], site: CommandSite) -> str:
    """The absolute executable ``program`` names, following the module's resolution rules."""
    if "/" in program:
        return _checked(workspace_path(program, site.root), program, "path")
    if program in PYTHON_NAMES and "PATH" not in call_env:
        found = workspace_path(site.python, site.root)
        return _checked(found, program, "the session's interpreter selection")
    search = call_env.get("PATH", SYSTEM_PATH)
    for folder in search.split(os.pathsep):
        if folder and os.path.isabs(folder):
            candidate = os.path.join(folder, program)
            if _is_executable(candidate):
                return candidate
    source = "the call's PATH" if "PATH" in call_env else f"the system search path {SYSTEM_PATH}"
    raise ToolRejected(
        f"executable {program!r} was not found in {source}; name PATH in env or give a path",
        kind="unknown_executable",
        details={"program": program, "search_path": search},
    )


def workspace_path(path: str, root: Path) -> str:
    """An absolute path kept as is; a relative one joined to ``root`` lexically (no symlink
    resolution) and refused when it climbs out."""
    if os.path.isabs(path):
        return os.path.normpath(path)
    joined = os.path.normpath(os.path.join(root, path))
    if os.path.commonpath([joined, str(root)]) != str(root):
        raise ToolRejected(
            f"executable {path!r} lies outside the workspace root; give an absolute path instead",
            kind="path_outside_workspace",
            details={"program": path},
        )
    return joined


def _checked(candidate: str, program: str, source: str) -> str:
    if not _is_executable(candidate):
        raise ToolRejected(
            f"executable {program!r} (from {source}: {candidate!r}) does not exist or is not executable",
            kind="unknown_executable",
            details={"program": program, "candidate": candidate},
        )
    return candidate


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _check_limits(timeout_s: float, output_limit: int) -> None:
    if not 0 < timeout_s <= MAX_TIMEOUT_S:
        raise ToolRejected(
            f"timeout {timeout_s!r} s is out of range; give 0 < timeout <= {MAX_TIMEOUT_S:g}",
            kind="invalid_limit",
            details={"timeout": timeout_s, "max": MAX_TIMEOUT_S},
        )
    if not 0 < output_limit <= MAX_OUTPUT_LIMIT:
        raise ToolRejected(
            f"output_limit {output_limit!r} is out of range; give 0 < output_limit <= {MAX_OUTPUT_LIMIT}",
            kind="invalid_limit",
            details={"output_limit": output_limit, "max": MAX_OUTPUT_LIMIT},
        )


def _check_argv(argv: Sequence[str]) -> tuple[str, ...]:
    if not argv or not argv[0]:
        raise ToolRejected("argv is empty; give the program and its arguments", kind="invalid_arguments")
    if any("\0" in part for part in argv):
        raise ToolRejected("argv contains a NUL character", kind="invalid_arguments")
    return tuple(argv)


def _check_env(env: Mapping[str, str]) -> dict[str, str]:
    for name, value in env.items():
        if not _ENV_NAME.match(name):
            raise ToolRejected(
                f"environment name {name!r} is not valid; use letters, digits and underscores",
                kind="invalid_arguments",
                details={"env_name": name},
            )
        if "\0" in value:
            raise ToolRejected(f"environment value of {name!r} contains a NUL character", kind="invalid_arguments")
    return dict(env)
