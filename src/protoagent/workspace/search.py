"""Regex search over workspace text files, skipping .git, binary files and git-ignored files."""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import stat
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.workspace.files import read_bytes
from protoagent.workspace.paths import open_beneath, open_dir_beneath
from protoagent.workspace.text import BINARY_SNIFF_BYTES

MAX_MATCHES = 100
MAX_FILES = 20000
MAX_LINE_CHARS = 200
_GIT_TIMEOUT_S = 30
_GIT_ENV_OVERRIDES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY")


@dataclass(frozen=True, slots=True)
class SearchMatch:
    path: str
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class SearchResult:
    matches: tuple[SearchMatch, ...]
    files_searched: int
    truncated: bool
    """The match or file limit stopped the search early."""


def compile_pattern(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as err:
        raise ToolRejected(
            f"pattern {pattern!r} is not a valid Python regular expression: {err}",
            kind="invalid_regex",
            details={"pattern": pattern},
        ) from None


def search_files(
    root: Path, root_fd: int, pattern: re.Pattern[str], relpath: str, file_filter: str | None
) -> SearchResult:
    """Search ``relpath`` (a file or a directory) line by line, up to ``MAX_MATCHES`` matches."""
    matches: list[SearchMatch] = []
    searched = 0
    for path in _candidate_files(root, root_fd, relpath):
        if file_filter and not _filter_accepts(path, file_filter):
            continue
        if searched >= MAX_FILES:
            return SearchResult(tuple(matches), searched, True)
        text = _read_text(root_fd, path)
        if text is None:
            continue
        searched += 1
        if pattern.search(text) is None:
            continue
        for number, line in enumerate(text.split("\n"), start=1):
            if pattern.search(line.removesuffix("\r")) is None:
                continue
            if len(matches) == MAX_MATCHES:
                return SearchResult(tuple(matches), searched, True)
            matches.append(SearchMatch(path, number, line.removesuffix("\r")[:MAX_LINE_CHARS]))
    return SearchResult(tuple(matches), searched, False)


def _filter_accepts(path: str, file_filter: str) -> bool:
    return fnmatch.fnmatchcase(posixpath.basename(path), file_filter) or fnmatch.fnmatchcase(path, file_filter)


def _read_text(root_fd: int, path: str) -> str | None:
    try:
        data = read_bytes(root_fd, path)
    except (OSError, ToolRejected):
        return None
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _candidate_files(root: Path, root_fd: int, relpath: str) -> Iterator[str]:
    fd = open_beneath(root_fd, relpath, os.O_RDONLY | os.O_NONBLOCK)
    try:
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    if not is_dir:
        yield relpath
        return
    listed = git_visible_files(root, relpath)
    files = listed if listed is not None else _walk_files(root_fd, relpath)
    for path in files:
        if ".git" not in path.split("/"):
            yield path


def git_visible_files(root: Path, relpath: str = ".") -> list[str] | None:
    """Tracked and untracked-but-not-ignored files under ``relpath``; None if not a git work tree."""
    command = ["git", "-c", "core.quotepath=off", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    if relpath != ".":
        command += ["--", f":(literal){relpath}"]
    env = {key: value for key, value in os.environ.items() if key not in _GIT_ENV_OVERRIDES}
    try:
        completed = subprocess.run(command, cwd=root, env=env, capture_output=True, timeout=_GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if completed.returncode != 0:
        return None
    names = {os.fsdecode(name) for name in completed.stdout.split(b"\0") if name}
    return sorted(names)


def _walk_files(root_fd: int, relpath: str) -> Iterator[str]:
    """Every file beneath ``relpath``, walked by descriptor without following symlinked dirs."""
    top_fd = open_dir_beneath(root_fd, relpath)
    try:
        for dirpath, dirnames, filenames, _ in os.fwalk(".", dir_fd=top_fd):
            dirnames[:] = sorted(name for name in dirnames if name != ".git")
            for name in sorted(filenames):
                yield posixpath.normpath(posixpath.join(relpath, dirpath, name))
    finally:
        os.close(top_fd)
