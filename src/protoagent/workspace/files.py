"""Reading and atomically writing workspace files through descriptors opened beneath the root.

Writes go to a temporary file in the target's directory (opened by descriptor), are fsynced,
then renamed over the target with ``os.rename(..., src_dir_fd=, dst_dir_fd=)``; new files
are linked into place so an existing file is never clobbered. ``.git`` and ``.protoagent``
are read-only to the agent, whether named directly or reached through a symbolic link.
"""

from __future__ import annotations

import errno
import hashlib
import os
import posixpath
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from protoagent.errors import ToolRejected
from protoagent.workspace.paths import DIR_FLAGS, open_beneath, open_dir_beneath, outside_workspace

MAX_FILE_BYTES = 8 * 1024 * 1024
PROTECTED_NAMES = frozenset({".git", ".protoagent"})
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_MAX_DEPTH = 4096


def revision_of(data: bytes) -> str:
    """The revision of file content: its SHA-256 digest in hex."""
    return hashlib.sha256(data).hexdigest()


def read_bytes(root_fd: int, relpath: str, *, limit: int = MAX_FILE_BYTES) -> bytes:
    """Read a regular file beneath the root; refuse directories, devices and files over ``limit``."""
    fd = open_beneath(root_fd, relpath, _READ_FLAGS)
    try:
        return _read_regular(fd, relpath, limit)
    finally:
        os.close(fd)


def _read_regular(fd: int, relpath: str, limit: int) -> bytes:
    info = os.fstat(fd)
    if stat.S_ISDIR(info.st_mode):
        raise ToolRejected(f"{relpath!r} is a directory; use list_directory", kind="is_directory")
    if not stat.S_ISREG(info.st_mode):
        raise ToolRejected(f"{relpath!r} is not a regular file", kind="not_regular_file")
    if info.st_size > limit:
        raise _too_large(relpath, info.st_size, limit)
    chunks: list[bytes] = []
    size = 0
    while chunk := os.read(fd, max(info.st_size - size, 0) + 65536):
        chunks.append(chunk)
        size += len(chunk)
        if size > limit:
            raise _too_large(relpath, size, limit)
    return b"".join(chunks)


def _too_large(relpath: str, size: int, limit: int) -> ToolRejected:
    return ToolRejected(
        f"{relpath!r} has {size} bytes, over the {limit}-byte limit for workspace files; "
        "use search_regex to find what you need",
        kind="file_too_large",
        details={"path": relpath, "size": size, "limit": limit},
    )


def refuse_protected(relpath: str) -> None:
    """Refuse a write whose path names ``.git`` or ``.protoagent``."""
    if any(part.casefold() in PROTECTED_NAMES for part in relpath.split("/")):
        raise _read_only(relpath)


def _read_only(relpath: str) -> ToolRejected:
    return ToolRejected(
        f"{relpath!r} is inside .git or .protoagent, which are read-only to the agent",
        kind="read_only_path",
        details={"path": relpath},
    )


def check_writable(root_fd: int, relpath: str, *, create: bool) -> None:
    """Refuse a write to ``relpath`` early (before approval) for the reasons ``write_atomic`` would."""
    with _target_dir(root_fd, relpath, create=False, missing_ok=create) as (dir_fd, name):
        if dir_fd is not None:
            _check_target(root_fd, dir_fd, name, relpath, create=create)
            return
    # Parents are missing: the deepest existing one must not be (an alias of) a protected dir.
    parent = posixpath.dirname(relpath)
    while True:
        parent = posixpath.dirname(parent)
        try:
            dir_fd = open_dir_beneath(root_fd, parent or ".")
        except FileNotFoundError:
            if not parent:
                raise
            continue
        try:
            ensure_not_protected(root_fd, dir_fd, relpath)
        finally:
            os.close(dir_fd)
        return


def write_atomic(root_fd: int, relpath: str, data: bytes, *, create: bool, expected_revision: str | None = None) -> str:
    """Write ``data`` to ``relpath`` atomically and return the new revision.

    ``create`` refuses an existing file and makes missing parent directories; otherwise the
    file must exist and, when ``expected_revision`` is given, still hold exactly that content.
    """
    with _target_dir(root_fd, relpath, create=create, missing_ok=False) as (dir_fd, name):
        assert dir_fd is not None
        mode = _check_target(root_fd, dir_fd, name, relpath, create=create)
        if expected_revision is not None:
            live = revision_of(_read_at(dir_fd, name, relpath))
            if live != expected_revision:
                raise ToolRejected(
                    f"{relpath!r} changed since it was read (revision {live[:12]}, expected "
                    f"{expected_revision[:12]}); read it again before editing",
                    kind="stale_revision",
                    details={"path": relpath, "current_revision": live},
                )
        _replace_contents(root_fd, dir_fd, name, relpath, data, mode=mode, create=create)
    return revision_of(data)


@contextmanager
def _target_dir(root_fd: int, relpath: str, *, create: bool, missing_ok: bool) -> Iterator[tuple[int | None, str]]:
    refuse_protected(relpath)
    parent, name = posixpath.split(relpath)
    if name in ("", ".", ".."):
        raise ToolRejected(f"{relpath!r} does not name a file", kind="invalid_path")
    try:
        dir_fd = make_dirs_beneath(root_fd, parent) if create else open_dir_beneath(root_fd, parent or ".")
    except FileNotFoundError:
        if not missing_ok:
            raise
        yield None, name
        return
    try:
        yield dir_fd, name
    finally:
        os.close(dir_fd)


def make_dirs_beneath(root_fd: int, relpath: str) -> int:
    """Open directory ``relpath`` beneath the root, creating missing components; return its fd."""
    current = os.dup(root_fd)
    try:
        parts = [part for part in relpath.split("/") if part not in ("", ".")]
        for index, part in enumerate(parts):
            ensure_not_protected(root_fd, current, relpath)
            try:
                os.mkdir(part, 0o777, dir_fd=current)
            except FileExistsError:
                pass
            following = open_dir_beneath(root_fd, "/".join(parts[: index + 1]))
            os.close(current)
            current = following
    except BaseException:
        os.close(current)
        raise
    return current


def _check_target(root_fd: int, dir_fd: int, name: str, relpath: str, *, create: bool) -> int | None:
    """Check the target's directory and entry; return the permission bits to keep, if any."""
    ensure_not_protected(root_fd, dir_fd, relpath)
    try:
        info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        if create:
            return None
        raise
    if create:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), relpath)
    if stat.S_ISLNK(info.st_mode):
        # Opening it beneath the root refuses a link that leads outside.
        os.close(open_beneath(root_fd, relpath, os.O_RDONLY | os.O_NONBLOCK))
        raise ToolRejected(
            f"{relpath!r} is a symbolic link to {os.readlink(name, dir_fd=dir_fd)!r}; "
            "edit the file it points to instead",
            kind="symlink_write_refused",
            details={"path": relpath},
        )
    if not stat.S_ISREG(info.st_mode):
        kind = "is_directory" if stat.S_ISDIR(info.st_mode) else "not_regular_file"
        raise ToolRejected(f"{relpath!r} is not a regular file", kind=kind, details={"path": relpath})
    return stat.S_IMODE(info.st_mode)


def ensure_not_protected(root_fd: int, dir_fd: int, relpath: str) -> None:
    """Walk up from ``dir_fd`` to the root; refuse if it left the root or passed a protected dir.

    This catches aliases such as a symlink to ``.git`` and a directory moved outside the root
    after it was opened.
    """
    root_info = os.fstat(root_fd)
    root_id = (root_info.st_dev, root_info.st_ino)
    current = os.dup(dir_fd)
    try:
        for _ in range(_MAX_DEPTH):
            info = os.fstat(current)
            ident = (info.st_dev, info.st_ino)
            if ident == root_id:
                return
            parent = os.open("..", DIR_FLAGS, dir_fd=current)
            os.close(current)
            current = parent
            parent_info = os.fstat(parent)
            if (parent_info.st_dev, parent_info.st_ino) == ident:
                break  # The filesystem root: the directory is not beneath the workspace.
            if _is_protected_entry(parent, ident):
                raise _read_only(relpath)
        raise outside_workspace(relpath)
    finally:
        os.close(current)


def _is_protected_entry(parent_fd: int, ident: tuple[int, int]) -> bool:
    for name in PROTECTED_NAMES:
        try:
            info = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
        except OSError:
            continue
        if (info.st_dev, info.st_ino) == ident:
            return True
    return False


def _read_at(dir_fd: int, name: str, relpath: str) -> bytes:
    fd = os.open(name, _READ_FLAGS | os.O_NOFOLLOW, dir_fd=dir_fd)
    try:
        return _read_regular(fd, relpath, MAX_FILE_BYTES)
    finally:
        os.close(fd)


def _replace_contents(
    root_fd: int, dir_fd: int, name: str, relpath: str, data: bytes, *, mode: int | None, create: bool
) -> None:
    temp = f".{name[:80]}.protoagent-{secrets.token_hex(6)}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o666, dir_fd=dir_fd)
    try:
        try:
            _write_all(fd, data)
            if mode is not None:
                os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        # The directory may have been moved since it was opened; check just before the switch.
        ensure_not_protected(root_fd, dir_fd, relpath)
        if create:
            _link_new(dir_fd, temp, name)
        else:
            os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(temp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise
    try:
        os.fsync(dir_fd)
    except OSError as err:
        if err.errno not in (errno.EINVAL, errno.EBADF):
            raise


def _link_new(dir_fd: int, temp: str, name: str) -> None:
    """Put a new file in place without ever replacing one that appeared meanwhile."""
    try:
        os.link(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd, follow_symlinks=False)
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise
        # No hard links on this filesystem: fall back to a checked rename.
        if _exists(dir_fd, name):
            raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), name) from None
        os.rename(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        return
    os.unlink(temp, dir_fd=dir_fd)


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return False
    return True


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
