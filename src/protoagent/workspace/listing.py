"""Bounded directory listings read through a descriptor opened beneath the root."""

from __future__ import annotations

import os
from dataclasses import dataclass

from protoagent.workspace.paths import open_dir_beneath

MAX_ENTRIES = 400


@dataclass(frozen=True, slots=True)
class Listing:
    """The sorted entries of one directory: directories end with ``/``, symlinks with ``@``."""

    path: str
    entries: tuple[str, ...]
    total: int
    truncated: bool


def list_entries(root_fd: int, relpath: str, *, limit: int = MAX_ENTRIES) -> Listing:
    """List directory ``relpath`` beneath the root, at most ``limit`` entries."""
    dir_fd = open_dir_beneath(root_fd, relpath)
    try:
        # scandir duplicates the descriptor, so closing ours afterwards is safe.
        with os.scandir(dir_fd) as scan:
            names = sorted(_marked(entry) for entry in scan)
    finally:
        os.close(dir_fd)
    return Listing(relpath, tuple(names[:limit]), len(names), len(names) > limit)


def _marked(entry: os.DirEntry[str]) -> str:
    if entry.is_symlink():
        return entry.name + "@"
    if entry.is_dir(follow_symlinks=False):
        return entry.name + "/"
    return entry.name
