"""Size caps on command output artifacts: head and tail kept, the cut marked, a total per session.

A command writes into a pipe; one pump thread per command copies it into the artifact file. The
first ``cap - tail`` bytes go straight to the file (so a running command can be observed); later
bytes are kept in a bounded tail buffer, and when the command is done the pump appends one
marker line naming what was cut, then the tail. So ``yes`` with a long timeout writes at most the
cap to disk and holds at most the tail in memory, whatever it prints.

Caps come from the environment (the environment layer of configuration):
``PROTOAGENT_ARTIFACT_CAP_BYTES`` (default 64 MiB) per artifact and
``PROTOAGENT_SESSION_ARTIFACTS_CAP_BYTES`` (default 1 GiB) for all of a session's artifacts; once
a session has used its total, each later artifact still keeps a small head and tail.
"""

from __future__ import annotations

import os
import select
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from protoagent.errors import ConfigError

ARTIFACT_CAP_ENV = "PROTOAGENT_ARTIFACT_CAP_BYTES"
SESSION_CAP_ENV = "PROTOAGENT_SESSION_ARTIFACTS_CAP_BYTES"
DEFAULT_ARTIFACT_CAP = 64 * 1024 * 1024
DEFAULT_SESSION_CAP = 1024 * 1024 * 1024
MIN_ARTIFACT_CAP = 64 * 1024
"""Even past the session total, an artifact keeps this much (head and tail) so output is seen."""
MAX_TAIL = 4 * 1024 * 1024
"""The most bytes of tail held in memory per running command."""
CUT_MARKER = "[... {cut} bytes cut: output passed the {cap}-byte artifact cap; head and tail kept ...]"
_CHUNK = 1024 * 1024
_DRAIN_S = 1.0
"""After the command is done, how long the pump keeps copying what its leftover children write."""

_used: dict[Path, int] = {}
_used_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ArtifactCaps:
    """The caps in force: bytes per artifact and bytes for all of one session's artifacts."""

    artifact: int = DEFAULT_ARTIFACT_CAP
    session: int = DEFAULT_SESSION_CAP

    @classmethod
    def from_env(cls) -> ArtifactCaps:
        return cls(_env_bytes(ARTIFACT_CAP_ENV, DEFAULT_ARTIFACT_CAP), _env_bytes(SESSION_CAP_ENV, DEFAULT_SESSION_CAP))


def _env_bytes(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < MIN_ARTIFACT_CAP:
        raise ConfigError(f"{name}={raw!r} must be a whole number of bytes, at least {MIN_ARTIFACT_CAP}")
    return value


class CappedPump:
    """Copies one command's output pipe into its artifact file under a size cap."""

    def __init__(self, path: Path, read_fd: int, cap: int) -> None:
        self.path = path
        self.cap = cap
        self._read_fd = read_fd
        self._file_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        self._tail_cap = min(MAX_TAIL, cap // 2)
        self._head_left = cap - self._tail_cap
        self._tail = bytearray()
        self._cut = 0
        self._stop_at: float | None = None
        self._done = threading.Event()
        threading.Thread(target=self._run, name=f"pump-{path.name}", daemon=True).start()

    def finish(self, timeout: float = _DRAIN_S + 5) -> None:
        """Copy what is left (briefly), write the marker and the tail, and close. Idempotent."""
        if self._stop_at is None:
            self._stop_at = time.monotonic() + _DRAIN_S
        self._done.wait(timeout)

    def _run(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self._read_fd], [], [], 0.05)
                stopping = self._stop_at is not None
                if not ready:
                    if stopping:
                        break
                    continue
                chunk = os.read(self._read_fd, _CHUNK)
                if not chunk or (stopping and self._stop_at is not None and time.monotonic() > self._stop_at):
                    self._take(chunk)
                    break
                self._take(chunk)
        except OSError:
            pass
        finally:
            self._close()

    def _take(self, chunk: bytes) -> None:
        if self._head_left > 0:
            head = chunk[: self._head_left]
            _write_all(self._file_fd, head)
            self._head_left -= len(head)
            chunk = chunk[len(head) :]
        if chunk:
            self._tail += chunk
            over = len(self._tail) - self._tail_cap
            if over > 0:
                del self._tail[:over]
                self._cut += over

    def _close(self) -> None:
        try:
            if self._cut:
                marker = CUT_MARKER.format(cut=self._cut, cap=self.cap)
                _write_all(self._file_fd, f"\n{marker}\n".encode())
                _write_all(self._file_fd, _without_partial_start(bytes(self._tail)))
            elif self._tail:
                _write_all(self._file_fd, bytes(self._tail))
            size = os.fstat(self._file_fd).st_size
            with _used_lock:
                _used[self.path.parent] = _used.get(self.path.parent, 0) + size
        except OSError:
            pass
        finally:
            self._tail = bytearray()
            os.close(self._file_fd)
            os.close(self._read_fd)
            self._done.set()


def open_capped(path: Path, caps: ArtifactCaps | None = None) -> tuple[CappedPump, int]:
    """Start a pump into the existing file ``path``; returns it and the pipe's write end.

    The write end is close-on-exec; the caller hands it to one child as stdout/stderr and then
    closes it.
    """
    caps = caps or ArtifactCaps.from_env()
    with _used_lock:
        left = caps.session - _used.get(path.parent, 0)
    cap = max(min(caps.artifact, left), MIN_ARTIFACT_CAP)
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    return CappedPump(path, read_fd, cap), write_fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _without_partial_start(data: bytes) -> bytes:
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0b1100_0000 == 0b1000_0000:
        skip += 1
    return data[skip:]
