"""Output journal: a command's combined output is kept once, under a size cap, and observations
are bounded head/tail views read back from it.

The child writes into a pipe that its supervisor copies into a ``CappedOutput``
(:mod:`protoagent.processes.artifact_cap`: head and tail kept, the cut marked; an artifact file
once the output passes the inline limit), so the harness holds at most a bounded tail in memory
and readers never wait on the pipe. A journal remembers how far it has been observed, so each
observation shows only output produced since the previous one.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from protoagent.processes.artifact_cap import ArtifactCaps, CappedOutput
from protoagent.processes.pump import OutputPump
from protoagent.processes.supervisors import SUPERVISORS

TRUNCATION_MARKER = "[... {omitted} bytes omitted; full output: {path} ...]"
SETTLE_TIMEOUT_S = 6.0
"""How long an observation of a finished command waits for its output to be complete."""
_outputs: dict[Path, CappedOutput] = {}
"""Outputs started by ``create_artifact``, until the journal of the same artifact takes them."""
_outputs_lock = threading.Lock()

Reader = Callable[[int, int], bytes]
"""``read(start, length)``: stored bytes of a journal."""


@dataclass(frozen=True, slots=True)
class Observation:
    """A bounded view of the journal's bytes ``[start, end)``."""

    text: str
    start: int
    end: int
    omitted: int
    """Bytes of the range left out of ``text`` (they stay in the artifact)."""


def create_artifact(folder: Path, stem: str) -> tuple[Path, int]:
    """Create ``folder/stem.log`` at once (refusing to reuse one) and return it with the write end
    of a pipe copied into it under the caps until every writer has closed it.

    The descriptor is close-on-exec in the harness; the caller hands it to exactly one child as
    stdout/stderr and then closes it.
    """
    output = CappedOutput(folder / f"{stem}.log", ArtifactCaps.from_env().for_artifact_in(folder))
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    pump = OutputPump(read_fd, output)

    def copy_to_end() -> None:
        try:
            pump.drain(None)
        finally:
            pump.close()

    with _outputs_lock:
        _outputs[output.path] = output
    SUPERVISORS.run(copy_to_end)
    return output.path, write_fd


class OutputJournal:
    """The output of one process and the offset up to which it has been observed."""

    def __init__(self, path: Path, output: CappedOutput | None = None) -> None:
        self._path = path
        self._offset = 0
        self._lock = threading.Lock()
        if output is None:
            with _outputs_lock:
                output = _outputs.pop(path, None)
        self._output = output

    @property
    def path(self) -> Path:
        """The artifact file; output still held in memory is written to it first."""
        return self.materialize()

    def materialize(self) -> Path:
        """Write output still held in memory to the artifact file; its path."""
        if self._output is None:
            return self._path
        return self._output.materialize()

    @property
    def artifact(self) -> Path | None:
        """The artifact file if the output needed one; None while it is all in memory (it then
        fits the inline limit, so observations show all of it)."""
        if self._output is None:
            return self._path
        return self._output.path if self._output.on_disk else None

    @property
    def size(self) -> int:
        if self._output is None:
            return os.stat(self._path).st_size
        return self._output.size

    @property
    def observed(self) -> int:
        """Bytes already shown (or deliberately skipped) in an observation."""
        return self._offset

    def read_text(self, limit: int) -> str:
        """The finished output as text: whole, or its head and tail when over ``limit`` bytes. It
        reads what the output holds in memory too, so a tail the artifact file could not take
        (a full disk) is still read."""
        if self._output is not None:
            self._output.closed.wait(SETTLE_TIMEOUT_S)
        read = self._output.read if self._output is not None else _file_reader(self._path)
        size = self.size
        if size <= limit:
            data = read(0, size)
        else:
            data = read(0, limit // 2) + b"\n" + read(size - limit // 2, limit // 2)
        return _decode(data)

    def peek(self, start: int, limit: int) -> tuple[str, int]:
        """The stored output from ``start`` (at most ``limit`` bytes, whole UTF-8 sequences) and
        the offset after it, without moving the observed offset: a live view for a person."""
        with self._lock:
            read = self._output.read if self._output is not None else _file_reader(self._path)
            size = self.size
            start = min(start, size)
            end = _complete_utf8_end(read, start, min(size, start + limit))
            return _decode(read(start, end - start)), end

    def consume(self, limit: int, *, settled: bool) -> Observation:
        """Observe the output produced since the previous observation, bounded by ``limit``.

        While the writer may still be running (``settled`` false), an incomplete UTF-8
        sequence at the end is left for the next observation instead of being split.
        """
        if settled and self._output is not None:
            # The command is done: wait until its supervisor has stored the rest and the cut tail.
            self._output.closed.wait(SETTLE_TIMEOUT_S)
        with self._lock:
            output = self._output
            read = output.read if output is not None else _file_reader(self._path)
            end = self.size
            if not settled:
                end = _complete_utf8_end(read, self._offset, end)
            if output is not None and end - self._offset > limit:
                output.materialize()  # the truncation marker names the file, so it must exist
            locator = output.path if output is not None else self._path
            view = _bounded(read, self._offset, end, limit, locator)
            self._offset = end
            return view


def bounded_view(path: Path, start: int, end: int, limit: int) -> Observation:
    """The bytes ``[start, end)`` of ``path``: whole when they fit ``limit``, else head and tail
    around exactly one truncation marker line naming the artifact."""
    return _bounded(_file_reader(path), start, end, limit, path)


def _file_reader(path: Path) -> Reader:
    def read(start: int, length: int) -> bytes:
        with open(path, "rb") as file:
            file.seek(start)
            return file.read(length)

    return read


def _bounded(read: Reader, start: int, end: int, limit: int, path: Path) -> Observation:
    size = end - start
    if size <= limit:
        return Observation(_decode(read(start, size)), start, end, 0)
    head_len = limit // 2
    head = _drop_partial_end(read(start, head_len))
    tail = _drop_partial_start(read(end - (limit - head_len), limit - head_len))
    omitted = size - len(head) - len(tail)
    head_text = _decode(head)
    if head_text:
        # Always a line break of its own, so a reader can tell the output's own last one from it.
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


def _complete_utf8_end(read: Reader, start: int, end: int) -> int:
    """``end`` moved back before an incomplete trailing UTF-8 sequence, never before ``start``."""
    probe = min(3, end - start)
    if probe <= 0:
        return end
    return end - _partial_tail_length(read(end - probe, probe))
