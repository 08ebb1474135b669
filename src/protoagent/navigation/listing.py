"""Which source files the index covers, and a cheap way to tell that the listing has not changed.

The files are the ones search visits (``workspace.search.visible_files``: git's ignore rules, no
``.git``, nothing run). Every walked folder is kept with a stamp of its own mtime and of its
``.gitignore``: a file added, removed or renamed changes its folder's mtime, and an edited ignore
file changes its stamp. While every stamp holds, the listing holds, and a refresh only stats the
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
    """Walked folder (and the exclude file) -> stamp."""


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
    folders = {folder: folder_stamp(root_fd, folder) for folder in walked}
    folders[EXCLUDE_FILE] = _stamp(root_fd, EXCLUDE_FILE)
    return Listing(files, folders)


def listing_holds(root_fd: int, folders: dict[str, str]) -> bool:
    """Whether no walked folder and no ignore file changed since ``folders`` was taken."""
    if EXCLUDE_FILE not in folders:
        return False
    return all(
        (_stamp(root_fd, name) if name == EXCLUDE_FILE else folder_stamp(root_fd, name)) == held
        for name, held in folders.items()
    )


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


def folder_stamp(root_fd: int, folder: str) -> str:
    return f"{_stamp(root_fd, folder)}|{_stamp(root_fd, posixpath.join(folder, '.gitignore'))}"


def _stamp(root_fd: int, path: str) -> str:
    try:
        info = os.stat(path, dir_fd=root_fd, follow_symlinks=False)
    except OSError:
        return "-"
    return f"{info.st_mode}:{info.st_size}:{info.st_mtime_ns}:{info.st_ino}"
