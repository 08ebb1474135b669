"""Copying a command's output pipe into its ``CappedOutput`` on the thread that supervises it.

The supervisor waits for the command's exit and copies its output in one ``poll`` loop, so a
command costs no thread of its own and its exit is seen the moment it happens: the exit is a
readable process descriptor (``pidfd``, Linux 5.3 and later), not a timed ``waitpid`` poll.
"""

from __future__ import annotations

import math
import os
import select
import time

from protoagent.processes.artifact_cap import CappedOutput

_CHUNK = 1024 * 1024
FALLBACK_POLL_S = 0.005
"""Where no process descriptor can be had, how often the supervisor checks for the exit."""


def exit_descriptor(pid: int) -> int | None:
    """A descriptor that becomes readable when process ``pid`` exits; None where unsupported."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


class OutputPump:
    """Reads one command's output pipe (non-blocking) into its capped output."""

    def __init__(self, read_fd: int, output: CappedOutput) -> None:
        os.set_blocking(read_fd, False)
        self.output = output
        self._fd: int | None = read_fd

    def copy_until(self, wake_fd: int | None, timeout_s: float | None) -> bool:
        """Copy output until ``wake_fd`` is readable (true) or ``timeout_s`` passes (false).

        Without a ``wake_fd`` it copies for ``timeout_s``; ``None`` is no time limit."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            poller = select.poll()
            if self._fd is not None:
                poller.register(self._fd, select.POLLIN)
            if wake_fd is not None:
                poller.register(wake_fd, select.POLLIN)
            left_ms = None if deadline is None else max(0, math.ceil((deadline - time.monotonic()) * 1000))
            if self._fd is None and wake_fd is None:
                time.sleep((left_ms or 0) / 1000)
                return False
            ready = {fd for fd, _ in poller.poll(left_ms)}
            if self._fd is not None and self._fd in ready:
                self._read()
            if wake_fd is not None and wake_fd in ready:
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def drain(self, timeout_s: float | None) -> None:
        """Copy until end of file or for at most ``timeout_s`` (what leftover writers still write)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self._fd is not None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return
            ready, _, _ = select.select([self._fd], [], [], left)
            if ready:
                self._read()

    def close(self) -> None:
        """Stop reading (a writer left behind then gets SIGPIPE) and complete the output."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.output.close()

    def _read(self) -> None:
        assert self._fd is not None
        try:
            chunk = os.read(self._fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            os.close(self._fd)
            self._fd = None
            return
        # Never stop reading: a command whose reader went away dies of SIGPIPE. A full disk is
        # the output's concern (it keeps the tail in memory and says so).
        self.output.take(chunk)
