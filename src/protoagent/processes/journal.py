"""Output journal: a command's combined output is written once to an artifact file, and
observations are bounded head/tail views read back from it.

The child writes into a pipe that a pump thread copies into the artifact under a size cap
(:mod:`protoagent.processes.artifact_cap`: head and tail kept, the cut marked), so the harness
holds at most a bounded tail in memory and readers, who read the file, never wait on the pipe.
A journal remembers how far it has been observed, so each observation shows only output
produced since the previous one.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from protoagent.processes.artifact_cap import CappedPump, open_capped

TRUNCATION_MARKER = "[... {omitted} bytes omitted; full output: {path} ...]"
_pumps: dict[Path, CappedPump] = {}
"""Pumps started by ``create_artifact``, until the journal of the same artifact takes them."""
_pumps_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class Observation:
    """A bounded view of the journal's bytes ``[start, end)``."""

    text: str
    start: int
    end: int
    omitted: int
    """Bytes of the range left out of ``text`` (they stay in the artifact)."""


def create_artifact(folder: Path, stem: str) -> tuple[Path, int]:
    """Create ``folder/stem.log`` (refusing to reuse one) and return it with a write descriptor.

    The descriptor is close-on-exec in the harness; the caller hands it to exactly one child as
    stdout/stderr and then closes it.
    """
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{stem}.log"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC
    os.close(os.open(path, flags, 0o600))
    pump, write_fd = open_capped(path)
    with _pumps_lock:
        _pumps[path] = pump
    return path, write_fd


class OutputJournal:
    """The artifact of one process and the offset up to which it has been observed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._lock = threading.Lock()
        with _pumps_lock:
            self._pump = _pumps.pop(path, None)

    @property
    def size(self) -> int:
        return os.stat(self.path).st_size

    @property
    def observed(self) -> int:
        """Bytes already shown (or deliberately skipped) in an observation."""
        return self._offset

    def consume(self, limit: int, *, settled: bool) -> Observation:
        """Observe the output produced since the previous observation, bounded by ``limit``.

        While the writer may still be running (``settled`` false), an incomplete UTF-8
        sequence at the end is left for the next observation instead of being split.
        """
        if settled and self._pump is not None:
            # The command is done: let the pump copy what is left and append the cut tail.
            self._pump.finish()
        with self._lock:
            end = self.size
            if not settled:
                end = _complete_utf8_end(self.path, self._offset, end)
            view = bounded_view(self.path, self._offset, end, limit)
            self._offset = end
            return view


def bounded_view(path: Path, start: int, end: int, limit: int) -> Observation:
    """The bytes ``[start, end)`` of ``path``: whole when they fit ``limit``, else head and tail
    around exactly one truncation marker line naming the artifact."""
    size = end - start
    with open(path, "rb") as file:
        if size <= limit:
            file.seek(start)
            return Observation(_decode(file.read(size)), start, end, 0)
        head_len = limit // 2
        file.seek(start)
        head = _drop_partial_end(file.read(head_len))
        file.seek(end - (limit - head_len))
        tail = _drop_partial_start(file.read(limit - head_len))
    omitted = size - len(head) - len(tail)
    head_text = _decode(head)
    if head_text and not head_text.endswith("\n"):
        head_text += "\n"
    marker = TRUNCATION_MARKER.format(omitted=omitted, path=path)
    return Observation(f"{head_text}{marker}\n{_decode(tail)}", start, end, omitted)


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def _is_continuation(byte: int) -> bool:
    return byte & 0b1100_0000 == 0b1000_0000


def _sequence_length(lead: int) -> int:
    if lead >= 0b1111_0000:
        return 4
    if lead >= 0b1110_0000:
        return 3
    if lead >= 0b1100_0000:
        return 2
    return 1


def _partial_tail_length(data: bytes) -> int:
    """How many bytes at the end of ``data`` begin a UTF-8 sequence that is not complete yet."""
    back = 0
    while back < min(3, len(data)) and _is_continuation(data[-1 - back]):
        back += 1
    if back == len(data):
        return 0
    lead = data[-1 - back]
    if lead < 0b1100_0000:
        return 0
    return back + 1 if back + 1 < _sequence_length(lead) else 0


def _drop_partial_end(data: bytes) -> bytes:
    cut = _partial_tail_length(data)
    return data[: len(data) - cut] if cut else data


def _drop_partial_start(data: bytes) -> bytes:
    skip = 0
    while skip < min(3, len(data)) and _is_continuation(data[skip]):
        skip += 1
    return data[skip:]


def _complete_utf8_end(path: Path, start: int, end: int) -> int:
    """``end`` moved back before an incomplete trailing UTF-8 sequence, never before ``start``."""
    probe = min(3, end - start)
    if probe <= 0:
        return end
    with open(path, "rb") as file:
        file.seek(end - probe)
        return end - _partial_tail_length(file.read(probe))
