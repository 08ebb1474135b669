"""A bounded, ordered, de-duplicated inventory of dependency files and a bounded directory walk."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from protoagent.checks.types import MAX_DEPENDENCY_FILES
from protoagent.workspace.confined import read_confined

SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules"})
"""Directories a walk never enters (besides hidden ones and ``*.egg-info``): caches and vendored code."""


class DependencyInventory:
    """Collects workspace-relative files in first-seen order, up to a fixed cap."""

    def __init__(self, limit: int = MAX_DEPENDENCY_FILES) -> None:
        self._limit = limit
        self._files: dict[str, None] = {}
        self.truncated = False

    def add(self, relative: str) -> None:
        """Add one file; past the cap the inventory only remembers that it was truncated."""
        if relative in self._files:
            return
        if len(self._files) >= self._limit:
            self.truncated = True
            return
        self._files[relative] = None

    def add_path(self, root: Path, relative: str, max_entries: int = 4096) -> None:
        """Add a file, or the files beneath a directory (bounded walk); missing paths add nothing."""
        full = os.path.join(root, relative)
        if os.path.isfile(full):
            self.add(relative)
        elif os.path.isdir(full):
            for path in walk_files(root, relative, max_entries=max_entries):
                if self.full:
                    self.truncated = True
                    return
                self.add(path)

    @property
    def full(self) -> bool:
        """True once the cap is reached."""
        return len(self._files) >= self._limit

    def files(self) -> tuple[str, ...]:
        """The collected files in first-seen order."""
        return tuple(self._files)


def walk_files(root: Path, relative: str, *, max_entries: int = 4096, max_depth: int = 8) -> Iterator[str]:
    """Yield workspace-relative files beneath ``relative`` in sorted order, breadth-limited.

    Uses ``os.scandir``, never follows directory symlinks, skips hidden and build directories,
    and stops after ``max_entries`` directory entries so a huge tree cannot stall discovery.
    """
    budget = max_entries
    stack: list[tuple[str, int]] = [(relative, 0)]
    while stack and budget > 0:
        current, depth = stack.pop()
        try:
            with os.scandir(os.path.join(root, current)) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        subdirectories: list[tuple[str, int]] = []
        for entry in entries[:budget]:
            budget -= 1
            child = entry.name if current in ("", ".") else f"{current}/{entry.name}"
            if entry.is_file():
                yield child
            elif entry.is_dir(follow_symlinks=False) and depth < max_depth and _walkable(entry.name):
                subdirectories.append((child, depth + 1))
        stack.extend(reversed(subdirectories))


def _walkable(name: str) -> bool:
    return not name.startswith(".") and name not in SKIPPED_DIRECTORIES and not name.endswith(".egg-info")


@dataclass(frozen=True, slots=True)
class RootListing:
    """The names directly in the workspace root, read once with one ``os.scandir``."""

    files: frozenset[str]
    directories: frozenset[str]


def list_root(root: Path) -> RootListing:
    """List the workspace root (one directory, never the tree below it)."""
    files: set[str] = set()
    directories: set[str] = set()
    try:
        with os.scandir(root) as scan:
            for entry in scan:
                if entry.is_file():
                    files.add(entry.name)
                elif entry.is_dir():
                    directories.add(entry.name)
    except OSError:
        pass
    return RootListing(frozenset(files), frozenset(directories))


def read_prefix(root: Path | str, relative: str, limit: int) -> bytes:
    """The first ``limit`` bytes of a regular file beneath ``root``; empty when it cannot be read.

    Confined like read_file (no link out of the repository) and never blocking (a FIFO is skipped).
    """
    try:
        return read_confined(root, relative, limit=limit, cut=True)[:limit]
    except OSError:
        return b""
