"""Path confinement: every path is opened strictly beneath the workspace root, by descriptor.

Resolution happens at open time, never as a string check followed by a later open. On
Linux the kernel resolves the path with ``openat2(RESOLVE_BENEATH)``; elsewhere (or when
the call is unavailable or filtered) a per-component walk opens each directory with
``O_NOFOLLOW`` relative to its parent's descriptor and follows only relative symbolic
links that stay beneath the root. Both refuse ``..`` escapes, absolute paths and
symbolic links that lead outside with ``ToolRejected(kind="path_outside_workspace")``.
A multi-repository session has several roots: ``locate`` picks the one a path names, and the
open is then strictly beneath that root, exactly as with one.
"""

from __future__ import annotations

import ctypes
import errno
import os
import posixpath
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Literal

from protoagent.errors import ConfigError, ToolRejected

Resolver = Literal["auto", "openat2", "walk"]

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_SYS_OPENAT2 = 437  # The same number on every architecture that has the call.
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08
_MAX_SYMLINK_HOPS = 40
_SYMLINK_ERRNOS = frozenset({errno.ELOOP, errno.ENOTDIR, errno.EMLINK})
# Characters that look like "/", "\" or "." to a reader but are ordinary name characters.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Mn", "Me"})
"""Format characters (zero-width, bidi) and combining marks: they change nothing a person sees."""
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""Bidi embeddings, overrides and isolates: they reorder how a name displays."""
_LOOKALIKES = frozenset("\\\u2215\u2044\u29f8\u2571\uff0f\u2216\u29f9\uff3c\ufe68\u2024\u2025\uff0e\ufe52")


def outside_workspace(path: str) -> ToolRejected:
    """The one refusal for paths that resolve outside the root."""
    return ToolRejected(
        f"path {path!r} leads outside the workspace (through '..', an absolute path or a "
        "symbolic link); use a path relative to the workspace root",
        kind="path_outside_workspace",
        details={"path": path},
    )


def normalize_relpath(root: Path, path: str) -> str:
    """Return ``path`` as a normalized root-relative POSIX path (``"."`` for the root).

    Relative paths join the root; absolute paths must lie lexically inside it. This is
    only a first, friendly check: the open itself enforces confinement.
    """
    path = path.strip() or "."
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in path):
        raise ToolRejected(f"path {path!r} contains control characters", kind="invalid_path")
    if os.path.isabs(path):
        rel = _relative_to_root(root, _kernel_normpath(root, path))
        if rel is None:
            raise outside_workspace(path)
    else:
        rel = _kernel_normpath(root, path)
    if rel == ".." or rel.startswith("../"):
        raise outside_workspace(path)
    for part in rel.split("/"):
        folded = unicodedata.normalize("NFKC", part)
        # Zero-width, bidi and combining characters are invisible: what is left is what a person sees.
        visible = "".join(ch for ch in folded if unicodedata.category(ch) not in _INVISIBLE_CATEGORIES)
        dotty = (folded in {".", ".."} or visible in {".", ".."}) and part not in {".", ".."}
        dotty = dotty or any(ch in _BIDI_CONTROLS for ch in part)
        if dotty or "/" in folded or any(ch in _LOOKALIKES for ch in part):
            raise ToolRejected(
                f"path {path!r} has a component {part!r} with characters that look like a path "
                "separator or '..'; spell the path with plain '/' and ASCII dots",
                kind="invalid_path",
                details={"path": path},
            )
    return rel


"""Service key of a multi-repository session's further roots (the primary is the tool root)."""


@dataclass(frozen=True, slots=True)
class Located:
    """A tool path placed under one workspace root."""

    root: Path
    rel: str
    """Normalized and relative to ``root``; the only form ever opened (beneath ``root``)."""
    shown: str
    """How tools report it: ``rel`` under the primary root, the absolute path under another."""


def locate(root: Path, path: str, others: Sequence[Path] = ()) -> Located:
    """Place ``path`` under one root of the session.

    A relative path is under the primary ``root``. An absolute path is under the deepest root
    (primary or one of ``others``) that lexically contains it. Choosing a root grants nothing:
    the open still happens strictly beneath the chosen root, as for a single root.
    """
    candidates = [Path(root), *(Path(o) for o in others)]
    text = path.strip()
    chosen = Path(root)
    if others and os.path.isabs(text):
        lexical = posixpath.normpath(text)
        inside = [c for c in candidates if _relative_to_root(c, lexical) is not None]
        if inside:
            chosen = max(inside, key=lambda c: len(str(c)))
    rel = normalize_relpath(chosen, path)
    if chosen == Path(root):
        return Located(chosen, rel, rel)
    return Located(chosen, rel, str(chosen) if rel == "." else f"{chosen}/{rel}")


def _kernel_normpath(root: Path, path: str) -> str:
    """``path`` normalized; a ``..`` is resolved as the kernel would, after any symlink before it.

    Lexical normalization would turn ``link/..`` into ``.`` although the kernel goes to the parent
    of the link's target; so when a ``..`` follows other components the prefix is resolved first.
    """
    parts = path.split("/")
    if ".." not in parts[1:] or all(part in ("", ".", "..") for part in parts):
        return posixpath.normpath(path)
    base = path if os.path.isabs(path) else os.path.join(root, path)
    real_root = os.path.realpath(root)
    resolved = os.path.realpath(base)
    if os.path.commonpath([real_root, resolved]) != real_root:
        return ".." if not os.path.isabs(path) else resolved
    inside = os.path.relpath(resolved, real_root)
    return inside if not os.path.isabs(path) else os.path.join(str(root), inside)


def _relative_to_root(root: Path, absolute: str) -> str | None:
    for base in {str(root), os.path.realpath(root)}:
        base = base.rstrip("/") or "/"
        if absolute == base:
            return "."
        prefix = base if base.endswith("/") else base + "/"
        if absolute.startswith(prefix):
            return absolute[len(prefix) :]
    return None


@contextmanager
def open_root(root: Path) -> Iterator[int]:
    """Open the workspace root directory and yield its descriptor."""
    try:
        fd = os.open(root, DIR_FLAGS)
    except OSError as err:
        raise ConfigError(f"workspace root {str(root)!r} cannot be opened: {err.strerror}") from err
    try:
        yield fd
    finally:
        os.close(fd)


def open_beneath(root: int | Path, relpath: str, flags: int, mode: int = 0o666, *, resolver: Resolver = "auto") -> int:
    """Open ``relpath`` beneath ``root`` (a directory descriptor or path) and return the fd.

    Raises ``ToolRejected(kind="path_outside_workspace")`` for escapes and ``OSError`` for
    anything else (missing file, not a directory ...); see ``feedback_for_os_error``.
    """
    if not isinstance(root, int):
        with open_root(root) as root_fd:
            return open_beneath(root_fd, relpath, flags, mode, resolver=resolver)
    if relpath.startswith("/"):
        raise outside_workspace(relpath)
    flags |= os.O_CLOEXEC
    if resolver == "openat2" or (resolver == "auto" and openat2_available()):
        try:
            return _open_openat2(root, relpath, flags, mode)
        except OSError as err:
            if err.errno == errno.EXDEV:
                raise outside_workspace(relpath) from None
            if resolver == "openat2" or err.errno not in (errno.ENOSYS, errno.EPERM):
                raise
    return _open_walk(root, relpath, flags, mode)


def open_dir_beneath(root: int | Path, relpath: str, *, resolver: Resolver = "auto") -> int:
    """Open a directory beneath ``root`` and return its descriptor."""
    return open_beneath(root, relpath, DIR_FLAGS, resolver=resolver)


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


@cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.syscall.restype = ctypes.c_long
    except (OSError, AttributeError):
        return None
    return libc


def _open_openat2(dir_fd: int, relpath: str, flags: int, mode: int) -> int:
    libc = _libc()
    if libc is None:
        raise OSError(errno.ENOSYS, "openat2 is not available here", relpath)
    # openat2 rejects a non-zero mode unless the call may create a file.
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, _RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    path = ctypes.c_char_p(os.fsencode(relpath or "."))
    for _ in range(16):
        fd = libc.syscall(
            ctypes.c_long(_SYS_OPENAT2),
            ctypes.c_int(dir_fd),
            path,
            ctypes.byref(how),
            ctypes.c_size_t(ctypes.sizeof(how)),
        )
        if fd >= 0:
            return int(fd)
        err = ctypes.get_errno()
        # EAGAIN: a concurrent rename raced the '..' check; the kernel asks for a retry.
        if err not in (errno.EINTR, errno.EAGAIN):
            raise OSError(err, os.strerror(err), relpath)
    raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN), relpath)


@cache
def openat2_available() -> bool:
    """Whether ``openat2`` with ``RESOLVE_BENEATH`` works on this machine."""
    try:
        probe_dir = os.open("/", DIR_FLAGS)
    except OSError:
        return False
    try:
        os.close(_open_openat2(probe_dir, ".", DIR_FLAGS, 0))
    except OSError:
        return False
    finally:
        os.close(probe_dir)
    return True


def _open_walk(root_fd: int, relpath: str, flags: int, mode: int) -> int:
    """Resolve one component at a time, each opened with O_NOFOLLOW relative to its parent."""
    pending = [part for part in reversed(relpath.split("/")) if part not in ("", ".")]
    dirs = [root_fd]  # dirs[1:] are descriptors this walk owns.
    hops = 0
    try:
        while pending:
            name = pending.pop()
            if name == "..":
                if len(dirs) == 1:
                    raise outside_workspace(relpath)
                os.close(dirs.pop())
                continue
            if name == ".":
                continue
            last = not pending
            try:
                fd = os.open(name, (flags if last else DIR_FLAGS) | os.O_NOFOLLOW, mode, dir_fd=dirs[-1])
            except OSError as err:
                target = _symlink_target(name, dirs[-1], err)
                hops += 1
                if hops > _MAX_SYMLINK_HOPS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), relpath) from None
                if target.startswith("/"):
                    raise outside_workspace(relpath) from None
                pending.extend(part for part in reversed(target.split("/")) if part not in ("", "."))
                continue
            if last:
                return fd
            dirs.append(fd)
        return os.open(".", flags, mode, dir_fd=dirs[-1])
    finally:
        for fd in dirs[1:]:
            os.close(fd)


def _symlink_target(name: str, dir_fd: int, err: OSError) -> str:
    """The target of the symlink that made an O_NOFOLLOW open fail, else re-raise ``err``."""
    if err.errno not in _SYMLINK_ERRNOS:
        raise err
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:
        raise err from None


def feedback_for_os_error(err: OSError, path: str) -> ToolRejected:
    """Turn a failed open or write into feedback the model can act on."""
    reasons = {
        errno.ENOENT: ("not_found", f"{path!r} does not exist; list_directory shows what does"),
        errno.ENOTDIR: ("not_found", f"a parent of {path!r} is not a directory"),
        errno.EISDIR: ("is_directory", f"{path!r} is a directory; use list_directory"),
        errno.EEXIST: ("file_exists", f"{path!r} already exists; read it and use edit_file"),
        errno.EACCES: ("permission_denied", f"{path!r} is not accessible: permission denied"),
        errno.ELOOP: ("symlink_loop", f"{path!r} goes through too many symbolic links"),
    }
    kind, message = reasons.get(err.errno or 0, ("os_error", f"{path!r}: {err.strerror}"))
    return ToolRejected(message, kind=kind, details={"path": path})
