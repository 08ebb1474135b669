"""Git's ignore rules (``.gitignore`` files and ``.git/info/exclude``), read without running git.

Why ProtoAgent does not ask git (``git ls-files``) which files a search should visit: git reads
the repository's own configuration and runs the commands it names (``core.fsmonitor``,
``core.sshCommand``, ``diff.external``, filter drivers, credential helpers, hooks ...). The
workspace is untrusted input: a model can write a ``.git/config``, or a bare-repository layout
(``HEAD``, ``config``, ``objects/``, ``refs/``) into a folder that is not a repository, and turn a
read-only search, which is never approved, into code execution. Switching such keys off one by
one is a deny-list that the next git release can outgrow; parsing ignore files ourselves runs
nothing at all. That is the safer option, so listing walks the tree by descriptor and applies
these rules.

What this gives up, on purpose: a file that is tracked but also matches an ignore pattern is
skipped (git would list it), the user's global excludes file (``core.excludesFile``) is not read,
and ignore files above the workspace root are not read (they lie outside the workspace).
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass

MAX_IGNORE_FILE_BYTES = 1024 * 1024
"""An ignore file bigger than this is not read (it is not a real one)."""

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | os.O_NOFOLLOW


@dataclass(frozen=True, slots=True)
class IgnoreRule:
    """One pattern line of an ignore file, as git reads it."""

    segments: tuple[str, ...]
    """The pattern split on ``/``; ``**`` is a whole segment matching any number of folders."""
    anchored: bool
    """A slash at the start or in the middle ties the pattern to ``base``; else any level matches."""
    negate: bool
    """The line started with ``!``: a match re-includes the path."""
    dir_only: bool
    """The line ended with ``/``: only folders match."""
    base: str
    """The folder holding the ignore file, relative to the workspace root (``""`` for the root)."""

    def matches(self, relpath: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        if self.base:
            if not relpath.startswith(self.base + "/"):
                return False
            relpath = relpath[len(self.base) + 1 :]
        parts = relpath.split("/")
        if not self.anchored:
            return fnmatch.fnmatchcase(parts[-1], self.segments[0])
        return _segments_match(self.segments, parts)


def parse_ignore_file(text: str, base: str) -> list[IgnoreRule]:
    """The rules of one ignore file found in folder ``base``; lines git would skip are skipped."""
    rules: list[IgnoreRule] = []
    for raw in text.split("\n"):
        rule = _parse_line(raw.removesuffix("\r"), base)
        if rule is not None:
            rules.append(rule)
    return rules


def is_ignored(rules: Sequence[IgnoreRule], relpath: str, is_dir: bool) -> bool:
    """Whether ``relpath`` is ignored: the last rule that matches decides."""
    for rule in reversed(rules):
        if rule.matches(relpath, is_dir):
            return not rule.negate
    return False


def read_ignore_rules(dir_fd: int, name: str, base: str) -> list[IgnoreRule]:
    """The rules in file ``name`` of the folder open as ``dir_fd``; none if it is absent or odd."""
    try:
        fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
    except OSError:
        return []
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_IGNORE_FILE_BYTES:
            return []
        data = os.read(fd, MAX_IGNORE_FILE_BYTES)
    except OSError:
        return []
    finally:
        os.close(fd)
    return parse_ignore_file(data.decode("utf-8", errors="replace"), base)


def _parse_line(line: str, base: str) -> IgnoreRule | None:
    if not line or line.startswith("#"):
        return None
    line = _strip_trailing_spaces(line)
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    segments = [_fnmatch_segment(part) for part in line.lstrip("/").split("/") if part]
    if not segments:
        return None
    if anchored and segments[-1] == "**":
        # "dir/**" matches what is inside dir, never dir itself.
        segments = [*segments[:-1], "*", "**"]
    return IgnoreRule(tuple(segments), anchored, negate, dir_only, base)


def _strip_trailing_spaces(line: str) -> str:
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    return line


def _fnmatch_segment(part: str) -> str:
    """Git's glob syntax for one path segment, rewritten for :func:`fnmatch.fnmatchcase`."""
    if part == "**":
        return part
    out: list[str] = []
    index = 0
    while index < len(part):
        char = part[index]
        if char == "\\" and index + 1 < len(part):
            index += 1
            escaped = part[index]
            out.append(f"[{escaped}]" if escaped in "*?[" else escaped)
        elif char == "[" and part.startswith("[^", index):
            out.append("[!")
            index += 1
        else:
            out.append(char)
        index += 1
    return "".join(out).replace("**", "*")


def _segments_match(segments: tuple[str, ...], parts: list[str]) -> bool:
    """Match path parts against pattern segments; ``**`` spans zero or more parts (an NFA walk)."""
    states = _closure({0}, segments)
    for part in parts:
        following: set[int] = set()
        for index in states:
            if index == len(segments):
                continue
            if segments[index] == "**":
                following.add(index)
            elif fnmatch.fnmatchcase(part, segments[index]):
                following.add(index + 1)
        states = _closure(following, segments)
        if not states:
            return False
    return len(segments) in states


def _closure(states: set[int], segments: tuple[str, ...]) -> set[int]:
    result = set(states)
    pending = list(states)
    while pending:
        index = pending.pop()
        if index < len(segments) and segments[index] == "**" and index + 1 not in result:
            result.add(index + 1)
            pending.append(index + 1)
    return result
