"""Bubblewrap launcher: start ``bwrap`` for one command, tolerate covered paths (host sockets,
hidden files) that vanish, and leave no ``.protoagent`` mount point behind.

Usage: ``bwrap_exec.py [--cover PATH]... [--mount-point PATH --lock FILE] -- BWRAP ARGS...``

- ``--cover``: a path the bwrap arguments cover with ``--ro-bind /dev/null PATH`` (a host
  socket, a hidden file). Bubblewrap refuses to start when such a path is gone by the time it
  mounts (a program removed its socket after the harness searched for it). The launcher asks
  bwrap for its JSON status; when bwrap ended with status 1 and reported no exit code (so the
  command never started) and a covered path has vanished, it runs bwrap again without that
  cover (twice at most). Bwrap's one-line complaint about the first attempt stays in the output.
- ``--mount-point``: the workspace's absent (or empty) ``.protoagent``, which bwrap covers with
  an empty read-only tmpfs and so creates on the host. Every launcher relying on it holds a
  shared ``flock`` on ``--lock`` (a file in the data home, out of the commands' reach) while its
  command runs; the last one out (the exclusive lock granted) removes the folder if a launcher
  made it (``FILE.made``) and it is still empty. Removing it while another command runs would
  detach that command's protection, which the lock rules out.

The launcher stays the group leader and ends as bwrap ended (:mod:`exit_relay`); when the
harness dies it kills bwrap, and bwrap's sandbox dies with it (``--die-with-parent``).
Standard library only, run as ``python -I -S bwrap_exec.py``.
"""

from __future__ import annotations

import fcntl
import os
import select
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import ModuleType

SIGKILL = 9
ATTEMPTS = 3


def main(args: list[str]) -> None:
    split = args.index("--") if "--" in args else len(args)
    options, bwrap = args[:split], args[split + 1 :]
    covers: list[str] = []
    mount_point = lock = ""
    pairs = iter(options)
    for option in pairs:
        value = next(pairs, "")
        if option == "--cover":
            covers.append(value)
        elif option == "--mount-point":
            mount_point = value
        elif option == "--lock":
            lock = value
    if not bwrap:
        sys.stderr.write("bwrap launcher: usage: [--cover PATH]... [--mount-point PATH --lock FILE] -- BWRAP ...\n")
        raise SystemExit(126)
    relay = _sibling("exit_relay")
    relay.ignore_group_signals()
    harness = os.pidfd_open(os.getppid())
    held = _hold(lock, mount_point) if lock and mount_point else None
    status = run(bwrap, covers, harness)
    if held is not None:
        _release(held, lock, mount_point)
    relay.end_like(status)


def _sibling(name: str) -> ModuleType:
    if not __package__ and (folder := os.path.dirname(os.path.abspath(__file__))) not in sys.path:
        sys.path.insert(0, folder)
    full = f"{__package__}.{name}" if __package__ else name
    __import__(full)
    return sys.modules[full]


def run(bwrap: list[str], covers: list[str], harness: int) -> int:
    """Run bwrap (again without vanished covers, when that alone stopped it); its wait
    status. ``harness``: a process descriptor of the harness, whose end stops bwrap."""
    for attempt in range(ATTEMPTS):
        status, started = _attempt(bwrap, harness)
        if started or not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 1 or attempt == ATTEMPTS - 1:
            return status
        gone = {path for path in covers if not os.path.lexists(path)}
        if not gone:
            return status
        bwrap = without_covers(bwrap, gone)
        covers = [path for path in covers if path not in gone]
    return status


def without_covers(bwrap: list[str], gone: set[str]) -> list[str]:
    """``bwrap`` less each ``--ro-bind /dev/null PATH`` of a path in ``gone``."""
    kept: list[str] = []
    index = 0
    while index < len(bwrap):
        if bwrap[index : index + 2] == ["--ro-bind", "/dev/null"] and index + 2 < len(bwrap):
            if bwrap[index + 2] in gone:
                index += 3
                continue
        kept.append(bwrap[index])
        index += 1
    return kept


def _attempt(bwrap: list[str], harness: int) -> tuple[int, bool]:
    """One run of bwrap: its wait status, and whether the command started (bwrap reported an
    exit code on its JSON status descriptor)."""
    readable, writable = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.close(readable)
            os.set_inheritable(writable, True)
            _sibling("exit_relay").default_signals()
            os.execv(bwrap[0], [bwrap[0], "--json-status-fd", str(writable), *bwrap[1:]])
        except OSError as error:
            sys.stderr.write(f"bwrap launcher: could not start {bwrap[0]!r}: {error.strerror}\n")
            sys.stderr.flush()
        finally:
            os._exit(127)
    os.close(writable)
    report = _collect(readable, child, harness)
    status = os.waitpid(child, 0)[1]
    return status, b'"exit-code"' in report


def _collect(readable: int, child: int, harness: int) -> bytes:
    """What bwrap writes on its status descriptor until it exits (a descendant that kept the
    descriptor open does not hold the launcher). When the harness dies first, bwrap is killed,
    and its sandbox with it (``--die-with-parent``)."""
    watch = os.pidfd_open(child)
    poller = select.poll()
    poller.register(readable, select.POLLIN)
    poller.register(watch, select.POLLIN)
    poller.register(harness, select.POLLIN)
    report = b""
    try:
        while True:
            ready = dict(poller.poll())
            if harness in ready:
                os.kill(child, SIGKILL)
                poller.unregister(harness)
            if readable in ready:
                chunk = os.read(readable, 4096)
                if not chunk:
                    poller.unregister(readable)
                report += chunk
            if watch in ready:
                os.set_blocking(readable, False)
                try:
                    report += os.read(readable, 65536)
                except (BlockingIOError, OSError):
                    pass
                return report
    finally:
        os.close(watch)
        os.close(readable)


def _hold(lock: str, mount_point: str) -> int | None:
    """A shared lock on ``lock``, and ``lock.made`` when the mount point is still to be made."""
    try:
        os.makedirs(os.path.dirname(lock), mode=0o700, exist_ok=True)
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None  # no cleanup, the protection itself does not depend on it
    fcntl.flock(fd, fcntl.LOCK_SH)
    if not os.path.lexists(mount_point):
        try:
            os.close(os.open(f"{lock}.made", os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600))
        except OSError:
            pass
    return fd


def _release(fd: int, lock: str, mount_point: str) -> None:
    """Remove the mount point when no other command relies on it, a launcher made it and it is
    empty."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return  # another command still runs with it; the last one out removes it
    try:
        if os.path.lexists(f"{lock}.made"):
            if os.path.isdir(mount_point) and not os.path.islink(mount_point) and not os.listdir(mount_point):
                os.rmdir(mount_point)
            os.unlink(f"{lock}.made")
    except OSError:
        pass
    finally:
        os.close(fd)


if __name__ == "__main__":
    main(sys.argv[1:])
