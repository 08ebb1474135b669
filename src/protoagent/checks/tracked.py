"""Revision capture around a check run: which tracked files the check itself changed.

A check is a measurement, but a "build" may rewrite README.md or a formatter may reformat
source. Before each run the candidate files (every file git would not ignore, read without
running git, leaving out caches and virtual environments) are captured with their SHA-256
revisions; after the run the same files are compared. A changed or removed file is reported by
the receipt, so the run can say the check changed it and never count it as the agent's edit.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from pathlib import Path

from protoagent.checks.receipts import file_digest
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
