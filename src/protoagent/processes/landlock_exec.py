"""Landlock launcher: confine this process's writes, TCP and signals, then ``exec`` the command.

It runs as a small script (``python -I -S landlock_exec.py ...``) between the harness and the
command, because a ``preexec_fn`` is not safe in a threaded harness. It imports only the
standard library so it starts in milliseconds and never sees the harness's packages.

Usage: ``landlock_exec.py --root DIR [--write PATH]... [--tmpdir DIR] [--hide PATH]...
[--read PATH]... [--protect PATH]... [--network] -- ARGV...``

Rules (Landlock ABI >= 3, enforced by the kernel for this process and everything it starts):
- reads are allowed everywhere except beneath each ``--hide`` path (a ``--read`` path inside one
  stays readable); execution is not restricted;
- writes (create, remove, rename, truncate, write) are allowed beneath each ``--write`` path and
  beneath the root except its ``--protect`` and ``--hide`` paths;
- Landlock only adds permissions, beneath a path: to leave one path out, its parent's other
  entries are granted one by one (``_grant_except``), so new entries cannot be made beside a
  left-out path (a listing of such a folder is refused too). When every left-out path of the
  root is an absent top-level name (``.protoagent`` in a workspace without ``.git``), the root
  keeps every right but making folders and symlinks, so new top-level files can still be made;
- ``/dev/null``, ``/dev/zero``, ``/dev/full`` and ``/dev/tty`` stay writable;
- TCP bind and connect are refused unless ``--network`` (ABI >= 4; UDP is not covered);
- signals and abstract UNIX sockets outside the sandbox are refused (ABI >= 6); ptrace-style
  access to other processes, such as reading ``/proc/<pid>/environ``, is refused by Landlock;
- what Landlock does not govern (chmod, chown, utime and extended attributes, and pathname UNIX
  sockets) is held by a seccomp filter (:mod:`protoagent.processes.seccomp_filter`) and answered
  by this launcher: it forks, the child confines itself, installs the filter and hands its
  listener over (``pidfd_getfd``) before it ``exec``s the command, and the launcher, outside the
  Landlock domain, supervises (:mod:`protoagent.processes.seccomp_supervisor`) until the child
  exits, then ends as the child ended (:mod:`protoagent.processes.exit_relay`).
Exit status 126 with one line on stderr when the sandbox cannot be set up.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # the script imports neither (each costs milliseconds at every command)
    from types import ModuleType
    from typing import Any, NoReturn

SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
PR_CAPBSET_DROP = 24
SYS_PIDFD_GETFD = 438
MIN_ABI = 3

WRITE_FILE = 1 << 1
READ_RIGHTS = (1 << 2) | (1 << 3)  # read file, read dir
FILE_RIGHTS = WRITE_FILE | (1 << 14)  # write, truncate
FILE_ACCESS = FILE_RIGHTS | (1 << 2)
"""The rights a rule on a file (not a folder) may carry here: write, truncate, read."""
DIR_RIGHTS = FILE_RIGHTS | sum(1 << bit for bit in (4, 5, 6, 7, 8, 9, 10, 11, 12, 13))
"""remove dir/file, make char/dir/reg/sock/fifo/block/sym, refer."""
MAKE_DIR_OR_SYM = (1 << 7) | (1 << 12)
NET_TCP = (1 << 0) | (1 << 1)  # bind, connect
SCOPES = (1 << 0) | (1 << 1)  # abstract unix sockets, signals
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty")


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is unavailable."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        version = int(libc.syscall(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(version, 0)


def confine(
    root: str,
    writable: list[str],
    network: bool,
    hidden: list[str] | None = None,
    protected: list[str] | None = None,
    readable: list[str] | None = None,
) -> None:
    """Restrict this process (and its future children) as the module describes."""
    libc = ctypes.CDLL(None, use_errno=True)
    abi = abi_version()
    if abi < MIN_ABI:
        raise OSError(f"Landlock ABI {abi} is below {MIN_ABI}")
    attr = struct.pack("=Q", DIR_RIGHTS | READ_RIGHTS)
    if abi >= 4:
        attr += struct.pack("=Q", 0 if network else NET_TCP)
    if abi >= 6:
        attr += struct.pack("=Q", SCOPES)
    buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = int(libc.syscall(SYS_CREATE_RULESET, buffer, len(attr), 0))
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    secret = frozenset(hidden or ())
    blocked = secret | frozenset(protected or ())
    _grant_except(libc, ruleset, "/", READ_RIGHTS, secret)
    for path in readable or ():
        _allow(libc, ruleset, path, READ_RIGHTS)
    for path in writable:
        _allow(libc, ruleset, path, DIR_RIGHTS | READ_RIGHTS)
    _grant_except(libc, ruleset, root, READ_RIGHTS, secret)
    _grant_except(libc, ruleset, root, DIR_RIGHTS, blocked)
    if _only_absent_top_level(root, blocked):
        _allow(libc, ruleset, root, DIR_RIGHTS & ~MAKE_DIR_OR_SYM)
    for device in DEVICES:
        _allow(libc, ruleset, device, FILE_RIGHTS | READ_RIGHTS)
    _drop_capabilities(libc)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
    if libc.syscall(SYS_RESTRICT_SELF, ruleset, 0) != 0:
        raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    os.close(ruleset)


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    """Empty the capability bounding set, so a command started by root runs without
    capabilities: with ``CAP_SYS_PTRACE`` it could still read the harness's environment, and
    with others act on the whole machine. Without ``CAP_SETPCAP`` there is nothing to drop."""
    try:
        last = int(open("/proc/sys/kernel/cap_last_cap", encoding="ascii").read())
    except (OSError, ValueError):
        last = 63
    for capability in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)


def _grant_except(libc: ctypes.CDLL, ruleset: int, path: str, rights: int, excluded: frozenset[str]) -> None:
    """Grant ``rights`` beneath ``path`` except beneath the ``excluded`` paths: a folder holding
    one is granted entry by entry (symlinks are reached through their targets)."""
    if path in excluded:
        return
    prefix = path.rstrip("/") + "/"
    if not any(other.startswith(prefix) for other in excluded):
        _allow(libc, ruleset, path, rights)
        return
    try:
        with os.scandir(path) as entries:
            children = [entry.path for entry in entries if not entry.is_symlink()]
    except OSError:
        return
    for child in children:
        _grant_except(libc, ruleset, child, rights, excluded)


def _only_absent_top_level(root: str, blocked: frozenset[str]) -> bool:
    """Whether every blocked path beneath ``root`` is a top-level name that does not exist."""
    prefix = root.rstrip("/") + "/"
    inside = [path for path in blocked if path.startswith(prefix)]
    return all(os.path.dirname(path) == root and not os.path.lexists(path) for path in inside)


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return  # a path that does not exist grants nothing
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            rights &= FILE_ACCESS
        if not rights:
            return
        rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, fd), 12)
        if libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, rule, 0) != 0:
            raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
    finally:
        os.close(fd)


class Options:
    """The launcher's command line."""

    def __init__(self, argv: list[str]) -> None:
        self.root = ""
        self.writable: list[str] = []
        self.hidden: list[str] = []
        self.protected: list[str] = []
        self.readable: list[str] = []
        self.network = False
        self.argv = argv


def parse(args: list[str]) -> Options:
    split = args.index("--") if "--" in args else len(args)
    found = Options(args[split + 1 :])
    lists = {"--write": found.writable, "--hide": found.hidden, "--protect": found.protected, "--read": found.readable}
    pairs = iter(args[:split])
    for option in pairs:
        if option == "--network":
            found.network = True
        elif option == "--root":
            found.root = next(pairs, "")
        elif option in lists:
            lists[option].append(next(pairs, ""))
        elif option == "--tmpdir":
            found.writable.append(next(pairs, ""))
            os.environ.setdefault("TMPDIR", found.writable[-1])
    return found


def _sibling(name: str) -> ModuleType:
    """A module beside this one, also when this file runs as a script (``-I`` leaves its folder
    off ``sys.path``)."""
    full = f"{__package__}.{name}" if __package__ else name
    if not __package__ and (folder := os.path.dirname(os.path.abspath(__file__))) not in sys.path:
        sys.path.insert(0, folder)
    __import__(full)
    return sys.modules[full]


def policy(options: Options) -> Any:
    """The supervisor's policy: metadata may change in the writable set (the root and the
    grants, less protected and hidden paths); sockets are reached there, less hidden paths."""
    resolved = os.path.realpath
    hidden = tuple(map(resolved, options.hidden))
    return _sibling("seccomp_supervisor").Policy(
        writable=tuple(map(resolved, [options.root, *options.writable])),
        excluded=(*map(resolved, options.protected), *hidden),
        hidden=hidden,
    )


def main(args: list[str]) -> None:
    options = parse(args)
    if not options.root or not options.argv:
        sys.stderr.write("landlock sandbox: usage: --root DIR [--write PATH]... [--network] -- ARGV...\n")
        raise SystemExit(126)
    relay = _sibling("exit_relay")
    supervisor, filters = _sibling("seccomp_supervisor"), _sibling("seccomp_filter")
    rules = policy(options)
    told, tell = os.pipe()
    acked, ack = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(told)
        os.close(ack)
        _start_confined(options, tell, acked)
    os.close(tell)
    os.close(acked)
    relay.ignore_group_signals()
    listener = _take_listener(child, told)
    os.close(ack)  # the child closes its own copy and runs the command
    if listener is None:  # the child could not confine itself and said why
        relay.end_like(os.waitpid(child, 0)[1])
    status = supervisor.serve(listener, child, filters.supervised(filters.machine()), rules)
    relay.end_like(status)


def _take_listener(child: int, told: int) -> int | None:
    """The child's seccomp listener, copied out of it (``pidfd_getfd``): the child names its
    number on ``told``. A descriptor passed with ``SCM_RIGHTS`` would need ``sendmsg``, which
    the filter already holds for the supervisor that is still waiting for it."""
    raw = os.read(told, 32)
    os.close(told)
    if not raw.strip().isdigit():
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    process = os.pidfd_open(child)
    try:
        listener = int(libc.syscall(SYS_PIDFD_GETFD, process, int(raw), 0))
    finally:
        os.close(process)
    if listener < 0:
        sys.stderr.write(f"landlock sandbox: could not supervise the command: {os.strerror(ctypes.get_errno())}\n")
        os.kill(child, 9)
        os.waitpid(child, 0)
        raise SystemExit(126)
    return listener


def _start_confined(options: Options, tell: int, acked: int) -> NoReturn:
    """In the forked child: confine, name the seccomp listener to the launcher, wait until it
    holds a copy, close it and ``exec``."""
    try:
        try:
            confine(
                options.root, options.writable, options.network, options.hidden, options.protected, options.readable
            )
            listener = _sibling("seccomp_filter").install()
        except OSError as error:
            sys.stderr.write(f"landlock sandbox: could not confine the command: {error}\n")
            sys.stderr.flush()
            os._exit(126)
        os.write(tell, str(listener).encode())
        os.close(tell)
        os.read(acked, 1)  # end of file once the launcher took its copy (or died)
        os.close(acked)
        os.close(listener)
        _sibling("exit_relay").default_signals()
        argv = options.argv
        try:
            os.execve(argv[0], argv, os.environ)
        except OSError as error:
            sys.stderr.write(f"landlock sandbox: could not start {argv[0]!r}: {error.strerror}\n")
            sys.stderr.flush()
            os._exit(127)
    finally:
        os._exit(126)


if __name__ == "__main__":
    main(sys.argv[1:])
