"""Which source files the index covers, and a cheap way to tell that the listing has not changed.

The files are the ones search visits (``workspace.search.visible_files``: git's ignore rules, no
``.git``, nothing run). Every walked folder and every ignore file is kept with a stamp (mode,
size, mtime, inode): a file added, removed or renamed changes its folder's mtime, and an edited
ignore file changes its own stamp. While every stamp holds, the listing holds, and a refresh only stats the
known files instead of walking the tree again.
"""

from __future__ import annotations

import os
import posixpath
import stat
from dataclasses import dataclass

from protoagent.navigation.js_facts import flavour_of
from protoagent.workspace.search import visible_files

MAX_SOURCE_BYTES = 2 * 1024 * 1024
"""Bigger source files are generated or bundled: they are not indexed."""
EXCLUDE_FILE = ".git/info/exclude"


@dataclass(frozen=True, slots=True)
class Listing:
    files: dict[str, str]
    """Source file -> stamp (size, mtime, inode)."""
    folders: dict[str, str]
    """Walked folder, existing ignore file and the exclude file -> stamp."""


def is_source(path: str) -> bool:
    return path.endswith(".py") or flavour_of(path) is not None


def list_sources(root_fd: int) -> Listing:
    """Walk the tree: every indexable source file, and the stamps that tell when to walk again."""
    walked: list[str] = []
    files: dict[str, str] = {}
    for path in visible_files(root_fd, folders=walked):
        if is_source(path):
            found = file_stamp(root_fd, path)
            if found is not None:
                files[path] = found
    watched = {folder: _stamp(root_fd, folder) for folder in walked}
    for folder in walked:  # an ignore file edited in place leaves its folder's mtime as it was
        ignore = posixpath.normpath(posixpath.join(folder, ".gitignore"))
        held = _stamp(root_fd, ignore)
        if held != "-":
            watched[ignore] = held
    watched[EXCLUDE_FILE] = _stamp(root_fd, EXCLUDE_FILE)
    return Listing(files, watched)


def listing_holds(root_fd: int, watched: dict[str, str]) -> bool:
    """Whether no walked folder and no ignore file changed since ``watched`` was taken (a new
    ignore file changes its folder's mtime)."""
    if EXCLUDE_FILE not in watched:
        return False
    return all(_stamp(root_fd, name) == held for name, held in watched.items())


def restamp(root_fd: int, paths: list[str]) -> dict[str, str]:
    """The current stamps of known files (a file gone or no longer regular is left out)."""
    found: dict[str, str] = {}
    for path in paths:
        current = file_stamp(root_fd, path)
        if current is not None:
            found[path] = current
    return found


def file_stamp(root_fd: int, path: str) -> str | None:
    try:
        info = os.stat(path, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_SOURCE_BYTES:
        return None
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"


def _stamp(root_fd: int, path: str) -> str:
    try:
        info = os.stat(path, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return "-"
    return f"{info.st_mode}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"
