"""Size caps on command output artifacts: head and tail kept, the cut marked, a total per session;
the artifact file written only when the output needs one.

A command writes into a pipe that its supervisor copies into a ``CappedOutput``. The first
``cap - tail`` bytes are stored as they arrive (so a running command can be observed); later
bytes are kept in a bounded tail buffer, and when the command is done one marker line naming what
was cut is stored, then the tail. So ``yes`` with a long timeout writes at most the cap to disk
and holds at most the tail in memory, whatever it prints.

Output that fits the command's inline limit (the bytes an observation shows whole) stays in
memory: the observation carries all of it, so no file is created for it. The file is created
once the output passes that limit, when it is not UTF-8 (the observation could not carry the raw
bytes), or when a caller asks for the path.

Caps come from the environment (the environment layer of configuration):
``PROTOAGENT_ARTIFACT_CAP_BYTES`` (default 64 MiB) per artifact and
``PROTOAGENT_SESSION_ARTIFACTS_CAP_BYTES`` (default 1 GiB) for all of a session's artifacts; once
a session has used its total, each later artifact still keeps a small head and tail.

When the artifact file cannot be written (a full disk, a file size limit), the command is not
stopped: its pipe keeps being drained, what was written stays in the file, the rest is kept in
memory as the bounded tail, and one closing line says what happened (``WRITE_FAILED_MARKER``).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from protoagent.errors import ConfigError
from protoagent.settings import ARTIFACT_CAP_ENV, SESSION_CAP_ENV, environment

DEFAULT_ARTIFACT_CAP = 64 * 1024 * 1024
DEFAULT_SESSION_CAP = 1024 * 1024 * 1024
MIN_ARTIFACT_CAP = 64 * 1024
"""Even past the session total, an artifact keeps this much (head and tail) so output is seen."""
MAX_TAIL = 4 * 1024 * 1024
"""The most bytes of tail held in memory per running command."""
CUT_MARKER = "[... {cut} bytes cut: output passed the {cap}-byte artifact cap; head and tail kept ...]"
WRITE_FAILED_MARKER = (
    "[artifact file could not be written: {error}; output past byte {disk} was kept only in memory, "
    "as its last {kept} bytes]"
)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC

_used: dict[Path, int] = {}
_used_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ArtifactCaps:
    """The caps in force: bytes per artifact and bytes for all of one session's artifacts."""

    artifact: int = DEFAULT_ARTIFACT_CAP
    session: int = DEFAULT_SESSION_CAP

    @classmethod
    def from_env(cls) -> ArtifactCaps:
        env = environment()
        return cls(
            _env_bytes(ARTIFACT_CAP_ENV, env.artifact_cap, DEFAULT_ARTIFACT_CAP),
            _env_bytes(SESSION_CAP_ENV, env.session_artifacts_cap, DEFAULT_SESSION_CAP),
        )

    def for_artifact_in(self, folder: Path) -> int:
        """The cap of a new artifact in ``folder``: the per-artifact cap, less what the session used."""
        with _used_lock:
            left = self.session - _used.get(folder, 0)
        return max(min(self.artifact, left), MIN_ARTIFACT_CAP)


def _env_bytes(name: str, raw: str, default: int) -> int:
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < MIN_ARTIFACT_CAP:
        raise ConfigError(f"{name}={raw!r} must be a whole number of bytes, at least {MIN_ARTIFACT_CAP}")
    return value


class CappedOutput:
    """One command's output under a size cap: in memory while it fits ``inline`` bytes, then in
    the artifact file at ``path`` (created then, refusing to reuse an existing file).

    One writer (the command's supervisor) calls ``take`` and ``close``; any thread may read.
    """

    def __init__(self, path: Path, cap: int, inline: int = 0) -> None:
        self.path = path
        self.cap = cap
        self.closed = threading.Event()
        """Set once the command's output is complete (marker and tail stored)."""
        self._inline = inline
        self._lock = threading.Lock()
        self._memory: bytearray | None = bytearray()
        """The stored bytes while there is no file (None once the file exists)."""
        self._fd: int | None = None
        self._size = 0
        self._taken = 0
        self._tail_cap = min(MAX_TAIL, cap // 2)
        self._head_left = cap - self._tail_cap
        self._tail = bytearray()
        self._cut = 0
        self._failure: str | None = None
        """Why the artifact file could not be written; None while it can."""
        self._disk = 0
        """After a failure: the bytes that reached the file (the stored bytes past them are in ``_spill``)."""
        self._spill: bytearray | None = None
        if inline <= 0:
            self.materialize()

    @property
    def size(self) -> int:
        """Bytes stored so far (the head while running; head, marker and tail once closed)."""
        return self._size

    @property
    def on_disk(self) -> bool:
        """Whether the artifact file exists."""
        return self._memory is None

    def read(self, start: int, length: int) -> bytes:
        """Up to ``length`` stored bytes from offset ``start``."""
        with self._lock:
            if self._memory is not None:
                return bytes(self._memory[start : start + length])
            disk, spill = self._disk, None if self._spill is None else bytes(self._spill)
        if spill is None:
            return _read_file(self.path, start, length)
        head = _read_file(self.path, start, min(length, disk - start)) if start < disk else b""
        offset = max(0, start - disk)
        return head + spill[offset : offset + length - len(head)]

    def materialize(self) -> Path:
        """Write the stored bytes to the artifact file if they are still in memory; its path."""
        with self._lock:
            if self._memory is not None and self._failure is None:
                self._create()
                if self.closed.is_set():
                    self._close_file()
        return self.path

    def take(self, chunk: bytes) -> None:
        """Store the next bytes the command wrote, under the cap."""
        with self._lock:
            self._taken += len(chunk)
            if self._memory is not None and self._taken > self._inline:
                self._create()
            if self._head_left > 0:
                head = chunk[: self._head_left]
                self._head_left -= len(head)
                chunk = chunk[len(head) :]
                self._store(head)
            if chunk:
                self._tail += chunk
                over = len(self._tail) - self._tail_cap
                if over > 0:
                    del self._tail[:over]
                    self._cut += over

    def close(self) -> None:
        """Store the cut marker and the tail; close the file. Idempotent."""
        with self._lock:
            if self.closed.is_set():
                return
            try:
                if self._cut and self._memory is not None:
                    self._create()
                if self._cut:
                    marker = CUT_MARKER.format(cut=self._cut, cap=self.cap)
                    self._store(f"\n{marker}\n".encode())
                    self._store(_without_partial_start(bytes(self._tail)))
                elif self._tail:
                    self._store(bytes(self._tail))
                if self._memory is not None and not _is_utf8(self._memory):
                    self._create()
                if self._spill is not None:
                    kept = len(self._spill)
                    note = WRITE_FAILED_MARKER.format(error=self._failure, disk=self._disk, kept=kept)
                    self._store(f"\n{note}\n".encode())
            finally:
                self._tail = bytearray()
                self.closed.set()
                if self._fd is not None:
                    self._close_file()

    def _create(self) -> None:
        """Create the file and move the stored bytes into it (caller holds the lock)."""
        assert self._memory is not None
        stem, again = self.path.stem, 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            while True:
                try:
                    self._fd = os.open(self.path, _CREATE_FLAGS, 0o600)
                    break
                except FileExistsError:
                    again += 1  # never reuse another command's artifact
                    self.path = self.path.with_name(f"{stem}-{again}.log")
        except OSError as error:
            self._fail(error, bytes(self._memory), 0)
            return
        stored, self._memory = self._memory, None
        try:
            _write_all(self._fd, stored)
        except OSError as error:
            self._fail(error, bytes(stored), 0)

    def _store(self, data: bytes) -> None:
        if self._spill is not None:
            self._spill += data
        elif self._memory is not None:
            self._memory += data
        elif self._fd is not None:
            try:
                _write_all(self._fd, data)
            except OSError as error:
                self._fail(error, data, self._size)
        self._size += len(data)

    def _fail(self, error: OSError, pending: bytes, before: int) -> None:
        """The file cannot take more bytes: keep what reached it, hold ``pending``'s unwritten
        rest in memory and send later output to the bounded tail (caller holds the lock).
        ``before`` is how many stored bytes the file held before ``pending`` was written."""
        disk = before
        if self._fd is not None:
            try:
                disk = os.fstat(self._fd).st_size
            except OSError:
                pass
            self._close_file()
        self._failure = error.strerror or str(error)
        self._disk = disk
        self._spill = bytearray(pending[max(0, disk - before) :])
        self._memory = None
        self._head_left = 0

    def _close_file(self) -> None:
        """Count the file against the session's total and close it (caller holds the lock)."""
        if self._fd is None:
            return
        try:
            size = os.fstat(self._fd).st_size
            with _used_lock:
                _used[self.path.parent] = _used.get(self.path.parent, 0) + size
        except OSError:
            pass
        finally:
            os.close(self._fd)
            self._fd = None


def _write_all(fd: int, data: bytes | bytearray) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_file(path: Path, start: int, length: int) -> bytes:
    try:
        with open(path, "rb") as file:
            file.seek(start)
            return file.read(length)
    except FileNotFoundError:
        return b""


def _is_utf8(data: bytearray) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _without_partial_start(data: bytes) -> bytes:
    skip = 0
    while skip < min(3, len(data)) and data[skip] & 0b1100_0000 == 0b1000_0000:
        skip += 1
    return data[skip:]
