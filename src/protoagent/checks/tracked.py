"""Revision capture around a check run: which tracked files the check itself changed.

A check is a measurement, but a "build" may rewrite README.md or a formatter may reformat
source. Before each run the candidate files (every file git would not ignore, read without
running git, leaving out caches and virtual environments) are captured with their SHA-256
revisions; after the run the same files are compared. A changed or removed file is reported by
the receipt, so the run can say the check changed it and never count it as the agent's edit.

The check's own runner is captured as well (``RunnerRevisions``): the executable and interpreter
it runs, first when the session starts and again before each run, so a run whose runner was
replaced by one of the run's commands is never taken as verification.
"""

from __future__ import annotations

import os
import posixpath
import threading
from dataclasses import dataclass
from pathlib import Path

from protoagent.checks.receipts import file_digest
from protoagent.checks.types import CheckPlan
from protoagent.errors import ToolRejected
from protoagent.processes.command import CommandSite, resolve_executable
from protoagent.workspace.confined import read_regular
from protoagent.workspace.ignore import IgnoreRule, is_ignored, read_ignore_rules

MAX_CAPTURED_FILES = 5000
"""Files captured per run at most; a larger tree is captured in part (sorted walk order)."""
MAX_HASHED_BYTES = 64 * 1024 * 1024
"""Bytes hashed per capture at most; past it files are compared by size and mtime only."""
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules"})
"""Folders whose files are caches or installed packages, never the project's tracked files
(hidden folders such as ``.git``, ``.venv`` and ``.pytest_cache`` are skipped as well)."""


@dataclass(frozen=True, slots=True)
class _FileState:
    size: int
    mtime_ns: int
    digest: str | None
    """SHA-256 of the bytes; ``None`` when the hashing budget ran out (size and mtime decide then)."""


@dataclass(frozen=True, slots=True)
class TrackedSnapshot:
    """The candidate files of a workspace and their revisions at one moment."""

    root: Path
    files: dict[str, _FileState]

    def changed_since(self) -> tuple[str, ...]:
        """Files of this snapshot whose bytes differ now, or that are gone, in sorted order."""
        changed = []
        for rel, before in self.files.items():
            try:
                stat = os.stat(self.root / rel)
            except OSError:
                changed.append(rel)
                continue
            if stat.st_size == before.size and stat.st_mtime_ns == before.mtime_ns:
                continue
            if before.digest is None or file_digest(self.root / rel) != before.digest:
                changed.append(rel)
        return tuple(sorted(changed))


def capture_tracked(root: Path, limit: int = MAX_CAPTURED_FILES, budget: int = MAX_HASHED_BYTES) -> TrackedSnapshot:
    """Capture the revisions of the candidate files beneath ``root``."""
    files: dict[str, _FileState] = {}
    for rel in candidate_files(root, limit):
        try:
            stat = os.stat(root / rel)
        except OSError:
            continue
        digest = None
        if stat.st_size <= budget:
            digest = file_digest(root / rel)
            budget -= stat.st_size
        files[rel] = _FileState(stat.st_size, stat.st_mtime_ns, digest)
    return TrackedSnapshot(root, files)


def candidate_files(root: Path, limit: int = MAX_CAPTURED_FILES) -> list[str]:
    """Workspace-relative regular files git would not ignore, skipping caches, virtual
    environments and symlinks, in sorted walk order, at most ``limit``."""
    found: list[str] = []
    chains: dict[str, list[IgnoreRule]] = {".": _exclude_rules(root)}
    for dirpath, dirnames, filenames, dir_fd in os.fwalk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        base = "" if rel_dir == "." else rel_dir
        rules = chains.pop(rel_dir, []) + read_ignore_rules(dir_fd, ".gitignore", base)
        dirnames[:] = sorted(
            name
            for name in dirnames
            if _kept_folder(name, dir_fd) and not is_ignored(rules, posixpath.join(base, name), True)
        )
        for name in dirnames:
            chains[posixpath.join(base, name) if base else name] = rules
        for name in sorted(filenames):
            rel = posixpath.join(base, name) if base else name
            if is_ignored(rules, rel, False) or os.path.islink(os.path.join(dirpath, name)):
                continue
            found.append(rel)
            if len(found) >= limit:
                return found
    return found


def _kept_folder(name: str, parent_fd: int) -> bool:
    """Walk into a folder unless it is hidden, a cache, Cargo's build folder or a virtual
    environment (a folder holding pyvenv.cfg)."""
    if name.startswith(".") or name in SKIPPED_FOLDERS or name.endswith(".egg-info"):
        return False
    if name == "target" and _exists("Cargo.toml", parent_fd):
        return False
    return not _exists(f"{name}/pyvenv.cfg", parent_fd)


def _exists(relative: str, dir_fd: int) -> bool:
    try:
        os.stat(relative, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def _exclude_rules(root: Path) -> list[IgnoreRule]:
    """The repository's ``.git/info/exclude`` rules, when there is one."""
    try:
        fd = os.open(root / ".git" / "info", os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return []
    try:
        return read_ignore_rules(fd, "exclude", "")
    finally:
        os.close(fd)


class RunnerRevisions:
    """The files that decide what a check's command runs, each with the revision it had when the
    session first saw it: the resolved executable (a symlink by its target and the target's bytes),
    a script's ``#!`` interpreter, and for a virtual environment its ``pyvenv.cfg``, every
    ``bin/python*`` and the startup hooks of its ``site-packages`` (``*.pth``, ``sitecustomize.py``).

    A check run whose runner files differ from the first revisions seen measured a command the
    run's own commands may have replaced (a fake ``.venv/bin/python`` printing "1 passed"), so its
    receipt is not verification evidence. Packages inside ``site-packages`` are not covered.
    """

    def __init__(self) -> None:
        self._first: dict[str, str] = {}
        self._lock = threading.Lock()

    @classmethod
    def at_start(cls, plan: CheckPlan, root: Path, python: str) -> RunnerRevisions:
        """Revisions of every planned check's runner, captured before any command of the run."""
        revisions = cls()
        site = CommandSite(root, root, python)  # resolution reads only the root and the interpreter
        for check in plan.checks:
            if check.runner_unavailable is not None or not check.argv:
                continue
            try:
                executable = resolve_executable(check.argv[0], dict(check.env), site)
            except ToolRejected:
                continue
            revisions.changed(executable)
        return revisions

    def changed(self, executable: str) -> tuple[str, ...]:
        """The runner files of ``executable`` whose revision now differs from the first one seen
        (files seen for the first time are remembered), in sorted order."""
        now = runner_files(executable)
        with self._lock:
            for path, revision in now.items():
                self._first.setdefault(path, revision)
            return tuple(sorted(path for path, revision in now.items() if self._first[path] != revision))


def runner_files(executable: str) -> dict[str, str]:
    """Path → revision of the files that decide what ``executable`` runs (see ``RunnerRevisions``)."""
    files: dict[str, str] = {}
    _add_revision(files, executable)
    interpreter = _shebang_interpreter(executable)
    if interpreter is not None:
        _add_revision(files, interpreter)
    for program in filter(None, (executable, interpreter)):
        venv = Path(program).parent.parent
        if Path(program).parent.name != "bin" or not (venv / "pyvenv.cfg").is_file():
            continue
        hooks = [*venv.glob("lib/python*/site-packages/*.pth"), *venv.glob("lib/python*/site-packages/*customize.py")]
        for path in [venv / "pyvenv.cfg", *sorted(venv.glob("bin/python*")), *sorted(hooks)]:
            _add_revision(files, str(path))
    return files


def _add_revision(files: dict[str, str], path: str) -> None:
    """A symlink is recorded by its target, and its resolved file by its bytes."""
    if path in files:
        return
    if os.path.islink(path):
        files[path] = f"link:{os.readlink(path)}"
        resolved = os.path.realpath(path)
        files.setdefault(resolved, _digest_revision(resolved))
    else:
        files[path] = _digest_revision(path)


def _digest_revision(path: str) -> str:
    digest = file_digest(Path(path))
    return "missing" if digest is None else f"sha256:{digest}"


def _shebang_interpreter(path: str) -> str | None:
    """The absolute interpreter a ``#!`` script names (``/usr/bin/env`` names are not followed)."""
    try:
        first = read_regular(path, 256).split(b"\n", 1)[0]  # a FIFO in its place is not waited on
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", errors="replace").split()
    return words[0] if words and os.path.isabs(words[0]) else None
