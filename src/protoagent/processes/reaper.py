"""Descendants that left their process group: the harness adopts them and stops them at the end.

A command that calls ``setsid`` (or double-forks) leaves its process group, so stopping the
group misses it. Inside the bubblewrap sandbox it still cannot outlive the command: its PID
namespace ends with the command. Without that namespace (Landlock only, or no sandbox), the
harness makes itself a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``): every orphaned
descendant is re-parented to the harness instead of to init, so ``stop_descendants`` can find
and stop all of them when the run ends.

What remains: a descendant that outlives a harness killed with SIGKILL (nobody is left to stop
it), and processes handed to another supervisor (a system service manager, ``at``, ``cron``).
"""

from __future__ import annotations

import ctypes
import os
import signal
import time
from pathlib import Path

from protoagent.processes.groups import stat_fields

PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")
_SPARED: set[int] = set()
"""Children this process keeps for its whole life (the embedded model's worker): a run's end
leaves them running."""


def spare(pid: int) -> None:
    """Leave child ``pid`` running when ``stop_descendants`` stops the rest."""
    _SPARED.add(pid)


def unspare(pid: int) -> None:
    _SPARED.discard(pid)


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants; false where the kernel refuses."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def descendants(pid: int | None = None) -> list[int]:
    """Every live (non-zombie) descendant of ``pid`` (default: this process)."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    live: set[int] = set()
    for entry in _PROC.iterdir():
        if not entry.name.isdigit():
            continue
        fields = stat_fields(entry / "stat")
        if fields is None or len(fields) < 2:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
        if fields[0] not in ("Z", "X"):
            live.add(int(entry.name))
    found: list[int] = []
    queue = [root]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return [pid for pid in found if pid in live]


def stop_descendants(grace_s: float = 1.0) -> int:
    """SIGTERM every descendant, SIGKILL what is left after ``grace_s``; reap them. Returns how
    many were found."""
    found = _unspared()
    _signal_all(found, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while _unspared() and time.monotonic() < deadline:
        _reap()
        time.sleep(0.02)
    for _ in range(50):
        left = _unspared()
        if not left:
            break
        _signal_all(left, signal.SIGKILL)
        _reap()
        time.sleep(0.02)
    _reap()
    return len(found)


def _unspared() -> list[int]:
    return [pid for pid in descendants() if pid not in _SPARED]


def _signal_all(pids: list[int], signum: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            continue


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
