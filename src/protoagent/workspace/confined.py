"""Reads the harness makes on its own (AGENTS.md, skills, agent files, configs), confined like the model's.

Every repository-owned file the harness reads without the model asking (instruction files,
skill bundles, agent files, ``project.json``, MCP files, check manifests, files hashed around a
check) goes through :func:`read_confined`: the open happens strictly beneath a fence directory
(the repository, a skill bundle, the user's skill root) exactly as ``read_file`` opens beneath
the workspace, so a symbolic link that leads outside is refused and never followed; and the
open never blocks, so a FIFO or a device is refused at once instead of hanging the run.
Refusals are :class:`RefusedRead`, an ``OSError``, so a caller that already treats an
unreadable file as absent or as a diagnostic keeps doing so, with a message that says why.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.workspace.paths import DIR_FLAGS, open_beneath

READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
"""Opening never waits: a FIFO without a writer or a device opens at once and is then refused."""
DEFAULT_LIMIT = 8 * 1024 * 1024


class RefusedRead(OSError):
    """A harness read refused before any byte was read: the message names the file and why."""

    def __init__(self, code: int, path: str, reason: str) -> None:
        super().__init__(code, reason, path)
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.filename}: {self.reason}"


def read_confined(fence: Path | str, path: Path | str, *, limit: int = DEFAULT_LIMIT, cut: bool = False) -> bytes:
    """The bytes of regular file ``path`` opened strictly beneath directory ``fence``.

    ``path`` is relative to ``fence`` or absolute inside it. A file over ``limit`` bytes is
    refused, or with ``cut`` its first ``limit + 1`` bytes are returned (so the caller sees that
    it was longer). Raises ``FileNotFoundError`` and other ``OSError`` as ``open`` would, and
    :class:`RefusedRead` for a path outside ``fence``, a link leading out, or a non-regular file.
    """
    shown = str(path)
    relative = confined_relpath(fence, path)
    fd = _open(fence, relative, shown)
    try:
        return _read_regular(fd, shown, limit, cut)
    finally:
        os.close(fd)


def digest_regular(path: Path | str) -> str | None:
    """SHA-256 hex of ``path`` when it is a regular file, else ``None``; opening never blocks.

    Not confined: a digest says nothing of the content, and a link inside the repository must
    keep its revision. A FIFO, socket or device is never opened for reading.
    """
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError:
        return None
    try:
        _require_regular(fd, str(path))
        with os.fdopen(os.dup(fd), "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None
    finally:
        os.close(fd)


def read_regular(path: Path | str, limit: int) -> bytes:
    """The first ``limit`` bytes of ``path`` when it is a regular file; opening never blocks.

    Not confined (for files the harness resolved itself, such as a check's executable); a FIFO,
    socket or device raises :class:`RefusedRead` instead of waiting for a writer.
    """
    fd = os.open(path, READ_FLAGS)
    try:
        _require_regular(fd, str(path))
        return os.read(fd, limit)
    finally:
        os.close(fd)


def confined_relpath(fence: Path | str, path: Path | str) -> str:
    """``path`` relative to ``fence``; an absolute path must lie (lexically) inside it."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    for base in dict.fromkeys((os.path.abspath(fence), os.path.realpath(fence))):
        absolute = os.path.normpath(text)
        if absolute == base:
            return "."
        if absolute.startswith(base.rstrip("/") + "/"):
            return absolute[len(base.rstrip("/")) + 1 :]
    raise RefusedRead(errno.EXDEV, text, f"lies outside {os.fspath(fence)!r}; not read")


def is_confined_dir(fence: Path | str, path: Path | str) -> bool:
    """Whether directory ``path`` resolves (through any symbolic links, absolute ones too) inside ``fence``.

    Files in such a directory are then read with :func:`read_confined` beneath the directory itself.
    """
    real_fence = os.path.realpath(fence)
    real = os.path.realpath(path)
    return os.path.isdir(real) and os.path.commonpath([real_fence, real]) == real_fence


def _open(fence: Path | str, relative: str, shown: str, flags: int = READ_FLAGS) -> int:
    try:
        root_fd = os.open(fence, DIR_FLAGS)
    except NotADirectoryError:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), shown) from None
    try:
        return open_beneath(root_fd, relative, flags)
    except ToolRejected:
        reason = f"is a symbolic link (or goes through one) that leads outside {os.fspath(fence)!r}; not followed"
        raise RefusedRead(errno.EXDEV, shown, reason) from None
    finally:
        os.close(root_fd)


def _require_regular(fd: int, shown: str) -> os.stat_result:
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise RefusedRead(errno.EISDIR, shown, "is a folder, not a file; not read")
    if not stat.S_ISREG(info.st_mode):
        raise RefusedRead(errno.EINVAL, shown, "is not a regular file (a FIFO, socket or device); not read")
    return info


def _read_regular(fd: int, shown: str, limit: int, cut: bool) -> bytes:
    info = _require_regular(fd, shown)
    if info.st_size > limit and not cut:
        raise RefusedRead(errno.EFBIG, shown, f"has {info.st_size} bytes, over the {limit}-byte limit; not read")
    chunks: list[bytes] = []
    size = 0
    while size <= limit and (chunk := os.read(fd, limit + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
    if size > limit and not cut:
        raise RefusedRead(errno.EFBIG, shown, f"grew over the {limit}-byte limit while read; not read")
    return b"".join(chunks)
