"""Regex search over workspace text files, skipping .git, binary files and git-ignored files.

Git is never run here: the files to visit come from a descriptor walk that applies the ignore
files itself (:mod:`protoagent.workspace.ignore` says why: a repository's git config can name
commands git would run). Patterns are matched by the ``regex`` package under a time limit, so a
catastrophic pattern ends as "pattern timed out" instead of hanging the run.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import regex

from protoagent.errors import ToolRejected
from protoagent.excerpts import excerpt
from protoagent.workspace.files import read_bytes
from protoagent.workspace.ignore import IgnoreRule, is_ignored, read_ignore_rules
from protoagent.workspace.line_scope import required_literal, whole_text_agrees
from protoagent.workspace.paths import open_beneath, open_dir_beneath
from protoagent.workspace.pattern_cost import MAX_PATTERN_CHARS, MAX_PATTERN_COST, pattern_cost
from protoagent.workspace.text import BINARY_SNIFF_BYTES

MAX_MATCHES = 100
MAX_FILES = 20000
MAX_LINE_CHARS = 200
SEARCH_TIME_LIMIT_S = 10.0
"""The longest one search may spend matching, in seconds."""
CALL_TIME_LIMIT_S = 1.0
"""The longest one match attempt may take; it bounds how long Ctrl-C waits for a search."""


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


class CompiledPattern:
    """A search pattern compiled by the ``regex`` package, whose matching can be timed out.

    It is compiled with MULTILINE, so the same object matches one line and, as a prefilter,
    a whole file's lines joined by ``\\n``; the prefilter only runs when it cannot reject a
    file that has a matching line (:mod:`protoagent.workspace.line_scope`).
    """

    def __init__(self, source: str, compiled: Any) -> None:
        self.source = source
        self._compiled = compiled
        self.prefilter = whole_text_agrees(source)
        """Whether a whole-text search may rule a file out before its lines are matched."""
        self.literal = required_literal(source)
        """Text every matching line contains: a file without it is skipped unread by the matcher."""

    def found_in(self, text: str, timeout_s: float) -> bool:
        """Whether the pattern occurs in ``text``; raises TimeoutError after ``timeout_s``.

        ``concurrent=True`` lets the matcher run without the GIL, so the event loop (and its
        Ctrl-C handling) keeps running while a slow pattern is being matched.
        """
        return self._compiled.search(text, concurrent=True, timeout=max(timeout_s, 0.001)) is not None


def compile_pattern(pattern: str) -> CompiledPattern:
    if len(pattern) > MAX_PATTERN_CHARS or pattern_cost(pattern) > MAX_PATTERN_COST:
        raise ToolRejected(
            f"pattern {excerpt(pattern)!r} is too big to compile (over {MAX_PATTERN_CHARS} characters, or counted "
            f"repetitions such as {{1000}} nested to more than {MAX_PATTERN_COST} items); use a simpler pattern",
            kind="invalid_regex",
            details={"pattern": excerpt(pattern)},
        )
    try:
        return CompiledPattern(pattern, regex.compile(pattern, regex.MULTILINE))
    except (regex.error, RecursionError, OverflowError, ValueError) as err:
        raise ToolRejected(
            f"pattern {excerpt(pattern)!r} is not a valid Python regular expression: {err}",
            kind="invalid_regex",
            details={"pattern": excerpt(pattern)},
        ) from None


def search_files(
    root_fd: int,
    pattern: CompiledPattern,
    relpath: str,
    file_filter: str | None,
    *,
    cancel: threading.Event | None = None,
    time_limit_s: float = SEARCH_TIME_LIMIT_S,
) -> SearchResult:
    """Search ``relpath`` (a file or a directory) line by line, up to ``MAX_MATCHES`` matches.

    The whole search runs under ``time_limit_s`` and each match attempt under
    ``CALL_TIME_LIMIT_S``; a pattern that needs longer is rejected ("pattern timed out"). Setting
    ``cancel`` stops the search between match attempts.
    """
    clock = _Clock(time.monotonic() + time_limit_s, pattern, cancel)
    matches: list[SearchMatch] = []
    searched = 0
    for path in _candidate_files(root_fd, relpath):
        if file_filter and not _filter_accepts(path, file_filter):
            continue
        if searched >= MAX_FILES:
            return SearchResult(tuple(matches), searched, True)
        text = _read_text(root_fd, path)
        if text is None:
            continue
        searched += 1
        for number, line in _matching_lines(text, path, clock):
            if len(matches) == MAX_MATCHES:
                return SearchResult(tuple(matches), searched, True)
            matches.append(SearchMatch(path, number, line[:MAX_LINE_CHARS]))
    return SearchResult(tuple(matches), searched, False)


def _matching_lines(text: str, path: str, clock: _Clock) -> Iterator[tuple[int, str]]:
    """``(number, line)`` of every line of ``text`` the pattern matches (``\\r\\n`` ends a line too)."""
    if clock.pattern.literal is not None and clock.pattern.literal not in text:
        return
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if clock.pattern.prefilter and not clock.found_in("\n".join(lines) if "\r" in text else text, path):
        return
    for number, line in enumerate(lines, start=1):
        if clock.found_in(line, path):
            yield number, line


@dataclass(slots=True)
class _Clock:
    deadline: float
    pattern: CompiledPattern
    cancel: threading.Event | None

    def found_in(self, text: str, path: str) -> bool:
        if self.cancel is not None and self.cancel.is_set():
            raise ToolRejected("search cancelled", kind="cancelled")
        remaining = self.deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            return self.pattern.found_in(text, min(remaining, CALL_TIME_LIMIT_S))
        except TimeoutError:
            raise ToolRejected(
                f"pattern timed out: {excerpt(self.pattern.source)!r} took too long on {path!r}; "
                "simplify it (avoid nested quantifiers such as (a+)+) or narrow path or file_filter",
                kind="pattern_timed_out",
                details={"path": path},
            ) from None


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


def _candidate_files(root_fd: int, relpath: str) -> Iterator[str]:
    fd = open_beneath(root_fd, relpath, os.O_RDONLY | os.O_NONBLOCK)
    try:
        is_dir = stat.S_ISDIR(os.fstat(fd).st_mode)
    finally:
        os.close(fd)
    if not is_dir:
        yield relpath
        return
    yield from visible_files(root_fd, relpath)


def visible_files(root_fd: int, relpath: str = ".", *, folders: list[str] | None = None) -> Iterator[str]:
    """Every file beneath ``relpath`` that git would not ignore, skipping ``.git``.

    The tree is walked by descriptor without following symlinked folders, and the ignore files
    are read by :mod:`protoagent.workspace.ignore`; git itself is never run (see there why).
    ``folders``, when given, receives every folder walked (a caller that keeps their mtimes can
    tell later whether the listing changed).
    """
    chains: dict[str, list[IgnoreRule]] = {".": _ancestor_rules(root_fd, relpath)}
    top_fd = open_dir_beneath(root_fd, relpath)
    try:
        for dirpath, dirnames, filenames, dir_fd in os.fwalk(".", dir_fd=top_fd):
            base = _joined(relpath, dirpath)
            if folders is not None:
                folders.append(base)
            rules = chains.pop(dirpath, []) + read_ignore_rules(dir_fd, ".gitignore", "" if base == "." else base)
            dirnames[:] = sorted(
                name for name in dirnames if name != ".git" and not is_ignored(rules, _joined(base, name), True)
            )
            for name in dirnames:
                chains[posixpath.join(dirpath, name)] = rules
            for name in sorted(filenames):
                path = _joined(base, name)
                if name != ".git" and not is_ignored(rules, path, False):
                    yield path
    finally:
        os.close(top_fd)


def _ancestor_rules(root_fd: int, relpath: str) -> list[IgnoreRule]:
    """The exclude file and the ignore files of the folders from the root down to ``relpath``."""
    rules: list[IgnoreRule] = []
    git_fd = _open_dir(root_fd, ".git/info")
    if git_fd is not None:
        rules += read_ignore_rules(git_fd, "exclude", "")
        os.close(git_fd)
    parts = [] if relpath == "." else relpath.split("/")
    for depth in range(len(parts)):
        folder = "/".join(parts[:depth]) or "."
        folder_fd = _open_dir(root_fd, folder)
        if folder_fd is not None:
            rules += read_ignore_rules(folder_fd, ".gitignore", "" if folder == "." else folder)
            os.close(folder_fd)
    return rules


def _open_dir(root_fd: int, relpath: str) -> int | None:
    try:
        return open_dir_beneath(root_fd, relpath)
    except (OSError, ToolRejected):
        return None


def _joined(base: str, name: str) -> str:
    return posixpath.normpath(posixpath.join(base, name))
