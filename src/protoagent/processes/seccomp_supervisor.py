"""The supervisor of the Landlock sandbox's seccomp filter: answers each metadata change and each
socket address a confined process names.

A call the filter of :mod:`protoagent.processes.seccomp_filter` holds arrives here as a
notification. The supervisor reads the call's path (or socket address) from
``/proc/TID/mem``, resolves it as the kernel would for that thread (against its cwd or the
directory descriptor, following symlinks itself, with ``/proc/self`` meaning the caller) and
answers:

- a metadata change (chmod, chown, utime, xattr) on a path outside the writable set, or on an
  open file whose path lies outside it: ``EPERM``; inside: the call continues;
- a pathname UNIX socket (connect, or a send with an address) outside the workspace and the
  writable grants: ``EPERM``; abstract and unnamed addresses, and other families, continue
  (Landlock governs TCP and abstract sockets);
- whatever cannot be read or resolved: ``EPERM``.

"Continue" lets the kernel run the call with the caller's own arguments, which it reads again:
a second thread (or a process sharing the memory) that rewrites the path between the check and
the call, or a symlink swapped in that moment, defeats the check (see SECURITY.md). The
supervisor lives outside the Landlock domain, so a confined process can neither signal nor
trace it; when it is gone every supervised call fails with ``ENOSYS``.

Standard library only: the Landlock launcher imports this file as a script's sibling.
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import struct

TYPE_CHECKING = False
if TYPE_CHECKING:
    from protoagent.processes.seccomp_filter import Shape

NOTIF = struct.Struct("=QII iI Q 6Q")
RESP = struct.Struct("=QqiI")
IOCTL_RECV = 0xC0502100
IOCTL_SEND = 0xC0182101
IOCTL_ID_VALID = 0x40082102
FLAG_CONTINUE = 1
AT_FDCWD = -100
AT_SYMLINK_NOFOLLOW = 0x100
AT_EMPTY_PATH = 0x1000
AF_UNIX = 1
PATH_MAX = 4096
MAX_LINKS = 40
MSGHDR = struct.Struct("=QI")
"""The start of a 64-bit ``struct msghdr``: ``msg_name`` and ``msg_namelen``."""
MMSGHDR_SIZE = 64
MAX_MESSAGES = 1024


def within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class Policy:
    """What confined processes may change and reach (absolute, resolved paths)."""

    __slots__ = ("excluded", "hidden", "writable")

    def __init__(self, writable: tuple[str, ...], excluded: tuple[str, ...], hidden: tuple[str, ...]) -> None:
        self.writable = writable
        """Where metadata may change and sockets be reached: the workspace and the grants."""
        self.excluded = excluded
        """Beneath the writable paths, what stays unchanged: protected and hidden paths."""
        self.hidden = hidden
        """Paths whose sockets are never reached, even inside the workspace."""

    def may_change(self, path: str) -> bool:
        inside = any(within(path, folder) for folder in self.writable)
        return inside and not any(within(path, other) for other in self.excluded)

    def may_reach(self, path: str) -> bool:
        inside = any(within(path, folder) for folder in self.writable)
        return inside and not any(within(path, other) for other in self.hidden)


class Unreadable(Exception):
    """The caller's memory or its file descriptors cannot be read: the call is refused."""


ANONYMOUS = ""
"""A target that is no file of any folder (a pipe, a socket, an anonymous inode)."""


class Caller:
    """One waiting call: reads the thread's memory and names its files."""

    def __init__(self, listener: int, notification_id: int, tid: int) -> None:
        self.tid = tid
        try:
            self._mem = os.open(f"/proc/{tid}/mem", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as error:
            raise Unreadable(str(error)) from None
        try:  # the thread could have died and its id been reused before the open
            fcntl.ioctl(listener, IOCTL_ID_VALID, struct.pack("=Q", notification_id))
        except OSError as error:
            os.close(self._mem)
            raise Unreadable(str(error)) from None

    def close(self) -> None:
        os.close(self._mem)

    def read(self, address: int, size: int) -> bytes:
        try:
            data = os.pread(self._mem, size, address)
        except (OSError, OverflowError) as error:
            raise Unreadable(str(error)) from None
        if len(data) < size:
            raise Unreadable("short read of the caller's memory")
        return data

    def string(self, address: int) -> str:
        """The NUL-terminated path at ``address`` (read page by page)."""
        data = b""
        while len(data) < PATH_MAX:
            chunk = min(PATH_MAX - len(data), 4096 - (address + len(data)) % 4096)
            part = self.read(address + len(data), chunk)
            end = part.find(b"\0")
            if end >= 0:
                return os.fsdecode(data + part[:end])
            data += part
        raise Unreadable("path longer than PATH_MAX")

    def fd_path(self, fd: int) -> str:
        """What the caller's descriptor ``fd`` (or ``AT_FDCWD``) names: an absolute path, or
        ``ANONYMOUS``."""
        link = f"/proc/{self.tid}/cwd" if fd == AT_FDCWD else f"/proc/{self.tid}/fd/{fd}"
        try:
            target = os.readlink(link)
        except OSError as error:
            raise Unreadable(str(error)) from None
        if not target.startswith("/"):
            return ANONYMOUS
        return target.removesuffix(" (deleted)")

    def resolve(self, path: str, base: str, follow: bool) -> str:
        """The absolute path the kernel reaches for ``path`` from ``base``."""
        if not path.startswith("/") and base == ANONYMOUS:
            raise Unreadable("a relative path from a descriptor that is no folder")
        parts = path.split("/")[::-1]  # a stack: the next component last
        current = "/" if path.startswith("/") else base
        links = 0
        while parts:
            name = parts.pop()
            if name in ("", "."):
                continue
            if name == "..":
                current = os.path.dirname(current)
                continue
            step = os.path.join(current, name)
            if step in ("/proc/self", "/proc/thread-self"):
                current = f"/proc/{self.tid}"
                continue
            if not follow and not any(part not in ("", ".") for part in parts):
                return step
            try:
                target = os.readlink(step)
            except OSError:
                current = step  # no symlink (or nothing there: the call itself will fail)
                continue
            links += 1
            if links > MAX_LINKS:
                raise Unreadable("too many symlinks")
            if not target.startswith("/"):
                if step.startswith("/proc/") and ":" in target.split("/")[0]:
                    return ANONYMOUS  # a magic link to a pipe, socket or anonymous inode
                parts += target.split("/")[::-1]  # a relative link (``/proc/mounts`` is ``self/mounts``)
                continue
            current = "/"
            parts += target.removesuffix(" (deleted)").split("/")[::-1]
        return current


def decide(caller: Caller, shape: Shape, args: tuple[int, ...], policy: Policy) -> bool:
    """Whether the call may continue."""
    if shape.kind == "fd":
        target = caller.fd_path(_signed(args[shape.fd]))
        return target == ANONYMOUS or policy.may_change(target)
    if shape.kind == "path":
        flags = args[shape.flags] if shape.flags >= 0 else 0
        follow = shape.follow and not flags & AT_SYMLINK_NOFOLLOW
        dirfd = _signed(args[shape.dirfd]) if shape.dirfd >= 0 else AT_FDCWD
        path = caller.string(args[shape.path]) if args[shape.path] else ""
        if not path and (shape.dirfd >= 0 and (not args[shape.path] or flags & AT_EMPTY_PATH)):
            target = caller.fd_path(dirfd)
            return target == ANONYMOUS or policy.may_change(target)
        target = caller.resolve(path, caller.fd_path(dirfd), follow)
        return target == ANONYMOUS or policy.may_change(target)
    if shape.kind == "address":
        return _address_allowed(caller, args[shape.path], args[shape.length] & 0xFFFFFFFF, policy)
    if shape.kind == "message":
        return _message_allowed(caller, args[shape.path], policy)
    count = min(args[shape.length] & 0xFFFFFFFF, MAX_MESSAGES)
    return all(_message_allowed(caller, args[shape.path] + i * MMSGHDR_SIZE, policy) for i in range(count))


def _message_allowed(caller: Caller, address: int, policy: Policy) -> bool:
    name, length = MSGHDR.unpack(caller.read(address, MSGHDR.size))
    return _address_allowed(caller, name, length, policy)


def _address_allowed(caller: Caller, address: int, length: int, policy: Policy) -> bool:
    if not address or length < 3:
        return True  # no address, or an unnamed one
    raw = caller.read(address, min(length, 110))
    if struct.unpack("=H", raw[:2])[0] != AF_UNIX or raw[2] == 0:
        return True  # another family (Landlock governs TCP), or an abstract socket
    path = os.fsdecode(raw[2:].split(b"\0", 1)[0])
    target = caller.resolve(path, caller.fd_path(AT_FDCWD), follow=True)
    return target != ANONYMOUS and policy.may_reach(target)


def _signed(value: int) -> int:
    low = value & 0xFFFFFFFF
    return low - (1 << 32) if low >= 1 << 31 else low


def answer(listener: int, shapes: dict[int, Shape], policy: Policy) -> None:
    """Receive one notification and answer it."""
    buffer = bytearray(NOTIF.size)
    try:
        fcntl.ioctl(listener, IOCTL_RECV, buffer, True)
    except OSError:
        return  # the caller was interrupted or died before it was read
    notification_id, tid, _flags, number, _arch, _ip, *args = NOTIF.unpack(buffer)
    allowed = False
    shape = shapes.get(number)
    if shape is not None:
        try:
            caller = Caller(listener, notification_id, tid)
        except Unreadable:
            caller = None
        if caller is not None:
            try:
                allowed = decide(caller, shape, tuple(args), policy)
            except Unreadable:
                allowed = False
            finally:
                caller.close()
    if allowed:
        reply = RESP.pack(notification_id, 0, 0, FLAG_CONTINUE)
    else:
        reply = RESP.pack(notification_id, 0, -errno.EPERM, 0)
    try:
        fcntl.ioctl(listener, IOCTL_SEND, reply)
    except OSError:
        return  # the caller went away meanwhile


def serve(listener: int, child: int, shapes: dict[int, Shape], policy: Policy) -> int:
    """Answer calls until ``child`` exits; its wait status."""
    watch = os.pidfd_open(child)
    poller = select.poll()
    poller.register(listener, select.POLLIN)
    poller.register(watch, select.POLLIN)
    try:
        while True:
            for fd, events in poller.poll():
                if fd == watch:
                    return os.waitpid(child, 0)[1]
                if events & select.POLLIN:
                    answer(listener, shapes, policy)
                elif events & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    poller.unregister(listener)
    finally:
        os.close(watch)
