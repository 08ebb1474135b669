"""The command sandbox: every command and check a session starts runs through one sandbox.

Modes (``--sandbox``): ``required`` refuses to run without a working sandbox; ``auto`` (the
default) uses one when available and otherwise runs each command only after a person approves
it, even under ``--approval auto``; ``off`` runs commands unconfined, as the person chose.

Both backends hide the paths of :mod:`protoagent.processes.sandbox_paths` (the user's secrets
and the data home; configurable in the user's ``settings.json``) and keep every ``.git`` of the
workspace and ``.protoagent`` (present or not) read-only.

Backends, best first:
- bubblewrap (``bwrap``): the whole filesystem read-only except the workspace, the session's
  ``HOME`` and temp folders (``TMPDIR``) and granted paths; hidden folders are covered by an
  empty read-only tmpfs, hidden files and host UNIX sockets outside the workspace by
  ``/dev/null``; an absent ``.protoagent`` by an empty read-only tmpfs (whose mount point the
  launcher ``bwrap_exec`` removes after the last command using it); own PID, IPC, UTS, user and (unless
  network is allowed) network namespaces, so the harness is invisible and a command's detached
  descendants die with it; no capabilities, even when the harness runs as root.
- Landlock (ABI >= 3, through ``landlock_exec``, with a seccomp supervisor on x86-64 and
  aarch64): the same write confinement and hiding (reads are granted per entry around hidden
  paths), TCP off, no signals, abstract sockets or ``/proc`` access to processes outside, no
  capabilities; chmod, chown, utime and xattr changes outside the writable set and pathname
  sockets outside the workspace are refused by the supervisor (``seccomp_supervisor``; a
  racing thread can defeat a check, see SECURITY.md); detached descendants are stopped by the
  harness when the run ends.

``PROTOAGENT_SANDBOX_BACKENDS`` (comma-separated, default ``bwrap,landlock``) limits which
backends may be used, so a test or a person can see how ProtoAgent behaves without them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from protoagent.errors import ConfigError
from protoagent.processes import landlock_exec, sandbox_paths, seccomp_filter
from protoagent.processes.sandbox_paths import configured_hiding, host_sockets, protected_paths, to_hide, within
from protoagent.settings import SANDBOX_BACKENDS_ENV, environment

SandboxMode = Literal["required", "auto", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("required", "auto", "off")
BACKENDS_ENV = SANDBOX_BACKENDS_ENV
DEFAULT_BACKENDS = ("bwrap", "landlock")
_LAUNCHER = str(Path(landlock_exec.__file__).resolve())
_BWRAP_LAUNCHER = str(Path(landlock_exec.__file__).with_name("bwrap_exec.py").resolve())


@dataclass(frozen=True, slots=True)
class SandboxScope:
    """Where one command may write: the workspace, the session's HOME and temp, and its cwd."""

    root: Path
    home: Path
    tmp: Path
    cwd: Path


@dataclass(frozen=True, slots=True)
class BwrapSandbox:
    """Confinement through bubblewrap (user, PID, IPC, UTS and network namespaces)."""

    executable: str
    network: bool = False
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    """Paths commands never see (resolved); see :mod:`protoagent.processes.sandbox_paths`."""
    readable: tuple[Path, ...] = ()
    """Paths inside hidden folders that commands may still read."""
    locks: Path | None = None
    """Where the launcher keeps its mount-point locks (in the data home, hidden from commands)."""

    @property
    def name(self) -> str:
        return f"bwrap (network {'on' if self.network else 'off'}{_granted(self.writable)})"

    def wrap(self, argv: tuple[str, ...], scope: SandboxScope) -> tuple[str, ...]:
        kept = (scope.root, scope.home, scope.tmp, *self.writable)
        around, rest = to_hide(self.hidden, kept)
        covered: list[Path] = []
        args = [self.executable, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        # A hidden folder holding a kept path is covered first, so the kept path is bound into it.
        args += _cover(around, covered)
        # The session temp folder keeps its own path (TMPDIR points at it): mounting it over /tmp
        # would hide whatever lives under the host's /tmp, a project's virtual environment included.
        args += ["--bind", str(scope.tmp), str(scope.tmp), "--setenv", "TMPDIR", str(scope.tmp)]
        for path in (scope.root, scope.home, *self.writable):
            args += ["--bind", str(path), str(path)]
        args += _cover(rest, covered)
        for path in self.readable:
            if os.path.exists(path):
                args += ["--ro-bind", str(path), str(path)]
        hiding = [*around, *rest]
        sockets = [s for s in host_sockets(kept) if not any(within(s, h) for h in hiding)]
        args += _cover(sockets, covered)
        made = len(covered)
        args += _protect(protected_paths(scope.root), covered)
        for folder in covered:
            args += ["--remount-ro", str(folder)]
        args += ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--chdir", str(scope.cwd)]
        if self.network:
            args.append("--share-net")
        launcher = [sys.executable, "-I", "-S", _BWRAP_LAUNCHER]
        for index in range(len(args) - 2):  # hidden files and host sockets: may vanish before the mount
            if args[index] == "--ro-bind" and args[index + 1] == "/dev/null":
                launcher += ["--cover", args[index + 2]]
        mount_point = scope.root / ".protoagent"
        if self.locks is not None and mount_point in covered[made:]:
            digest = hashlib.sha256(os.fsencode(scope.root)).hexdigest()[:32]
            launcher += ["--mount-point", str(mount_point), "--lock", str(self.locks / f"{digest}.lock")]
        return (*launcher, "--", *args, "--", *argv)


@dataclass(frozen=True, slots=True)
class LandlockSandbox:
    """Confinement through Landlock, applied by a launcher in the child before ``exec``."""

    network: bool = False
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    """Paths commands never read (resolved); see :mod:`protoagent.processes.sandbox_paths`."""
    readable: tuple[Path, ...] = ()
    """Paths inside hidden folders that commands may still read."""

    @property
    def name(self) -> str:
        return f"landlock (network {'on' if self.network else 'off'}{_granted(self.writable)})"

    def wrap(self, argv: tuple[str, ...], scope: SandboxScope) -> tuple[str, ...]:
        args = [sys.executable, "-I", "-S", _LAUNCHER, "--root", str(scope.root), "--write", str(scope.home)]
        args += ["--tmpdir", str(scope.tmp)]
        for path in self.writable:
            args += ["--write", str(path)]
        around, rest = to_hide(self.hidden, (scope.root, scope.home, scope.tmp, *self.writable))
        for path in (*around, *rest):
            args += ["--hide", str(path)]
        for path in self.readable:
            args += ["--read", str(path)]
        for path in protected_paths(scope.root):
            args += ["--protect", str(path)]
        if self.network:
            args.append("--network")
        return (*args, "--", *argv)


@dataclass(frozen=True, slots=True)
class Unconfined:
    """No sandbox. ``asks_each_command``: chosen by ``auto`` because none is available, so every
    command needs a person's approval; otherwise the person turned the sandbox off."""

    asks_each_command: bool
    reason: str

    @property
    def name(self) -> str:
        return f"none ({self.reason})"

    def wrap(self, argv: tuple[str, ...], scope: SandboxScope) -> tuple[str, ...]:
        return argv


Sandbox = BwrapSandbox | LandlockSandbox | Unconfined


def select_sandbox(
    mode: str,
    *,
    network: bool = False,
    writable: Sequence[Path] = (),
    hidden: Sequence[Path] | None = None,
    data_home: Path | None = None,
) -> Sandbox:
    """The sandbox for ``mode``; ``required`` without a working backend raises ``ConfigError``.
    ``hidden`` defaults to the deny list in force for ``data_home`` (default: the environment's;
    see ``sandbox_paths.configured_hiding``)."""
    if mode not in SANDBOX_MODES:
        raise ConfigError(f"unknown sandbox mode {mode!r}; use one of {', '.join(SANDBOX_MODES)}")
    granted = tuple(_granted_path(path) for path in writable)
    if mode == "off":
        return Unconfined(False, "--sandbox off: commands run unconfined")
    secret, readable = configured_hiding(data_home) if hidden is None else (tuple(map(_resolved, hidden)), ())
    bwrap = bwrap_executable()
    if bwrap is not None:
        locks = (sandbox_paths.data_home() if data_home is None else data_home) / "locks"
        return BwrapSandbox(bwrap, network, granted, secret, readable, locks)
    if landlock_available():
        return LandlockSandbox(network, granted, secret, readable)
    if mode == "required":
        fix = "install bubblewrap (apt-get install bubblewrap)"
        raise ConfigError(f"--sandbox required, but {missing_backends()}; {fix}")
    return Unconfined(True, f"{missing_backends()}: every command asks for approval")


def asks_each_command(sandbox: object) -> bool:
    """Whether commands under ``sandbox`` must be approved by a person whatever the policy."""
    return isinstance(sandbox, Unconfined) and sandbox.asks_each_command


def sandbox_notice(sandbox: object) -> str | None:
    """The one line to tell a person once when commands will not be confined."""
    if isinstance(sandbox, Unconfined):
        return f"sandbox: {sandbox.reason}"
    return None


def missing_backends() -> str:
    """Why no backend is available, in words."""
    allowed = _allowed_backends()
    bwrap = "bubblewrap is not allowed" if "bwrap" not in allowed else "bubblewrap (bwrap) is missing or fails"
    landlock = (
        "Landlock is not allowed"
        if "landlock" not in allowed
        else "Landlock ABI >= 3 with seccomp user notification (x86-64, aarch64) is unavailable"
    )
    return f"no sandbox is available ({bwrap}; {landlock})"


def bwrap_executable() -> str | None:
    """The ``bwrap`` on PATH when allowed and it can create its namespaces here."""
    if "bwrap" not in _allowed_backends():
        return None
    found = shutil.which("bwrap")
    return found if found is not None and _bwrap_works(found) else None


def landlock_available() -> bool:
    """Landlock ABI >= 3 and the seccomp supervision its launcher needs, tried once: a container
    whose own seccomp profile refuses ``seccomp`` or ``pidfd_getfd`` has no Landlock sandbox."""
    if "landlock" not in _allowed_backends() or landlock_exec.abi_version() < landlock_exec.MIN_ABI:
        return False
    return seccomp_filter.available() and _landlock_works()


@functools.cache
def _landlock_works() -> bool:
    probe = [sys.executable, "-I", "-S", _LAUNCHER, "--root", tempfile.gettempdir(), "--", "/bin/true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@functools.cache
def _bwrap_works(executable: str) -> bool:
    probe = [executable, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "--", "/bin/true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _allowed_backends() -> frozenset[str]:
    allowed = environment().sandbox_backends
    return frozenset(DEFAULT_BACKENDS) if allowed is None else allowed


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _granted_path(path: Path) -> Path:
    resolved = Path(path).expanduser().resolve()
    if not resolved.is_dir():
        raise ConfigError(f"writable path {str(path)!r} is not an existing folder; create it or drop --writable")
    return resolved


def _cover(paths: Sequence[Path], covered: list[Path]) -> list[str]:
    """bwrap arguments hiding ``paths``: a folder under an empty tmpfs (made read-only at the end,
    once kept paths are bound into it, so it is added to ``covered``), anything else under
    ``/dev/null``."""
    args: list[str] = []
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            args += ["--tmpfs", str(path)]
            covered.append(path)
        else:
            args += ["--ro-bind", "/dev/null", str(path)]
    return args


def _protect(paths: Sequence[Path], covered: list[Path]) -> list[str]:
    """bwrap arguments keeping ``paths`` read-only; an absent (or empty) one becomes an empty
    read-only tmpfs, so it cannot be created (a symlink is protected at its target, listed too).
    Where the folder cannot be written anyway (a read-only checkout), no mount point can be made
    or is needed. An empty folder gets the tmpfs too: it may be a mount point that the last
    command to use it removes before this one starts (see ``bwrap_exec``)."""
    args: list[str] = []
    for path in paths:
        if not os.path.lexists(path) or _empty_folder(path):
            if not os.access(path.parent, os.W_OK):
                continue
            args += ["--tmpfs", str(path)]
            covered.append(path)
        elif not path.is_symlink():
            args += ["--ro-bind", str(path), str(path)]
    return args


def _empty_folder(path: Path) -> bool:
    try:
        if not path.is_dir() or path.is_symlink():
            return False
        with os.scandir(path) as entries:
            return next(entries, None) is None
    except OSError:
        return False


def _granted(writable: tuple[Path, ...]) -> str:
    return f"; also writable: {', '.join(map(str, writable))}" if writable else ""
