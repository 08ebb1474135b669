"""Parsing many files for the index: in worker processes when there are enough, within a deadline.

A worker is a fresh interpreter running this module: it only turns bytes into facts (``ast`` or
tree-sitter), reads no file and runs nothing of the project; batches go in and rows come out as
``marshal`` frames over its pipes. Files left when the deadline passes are not parsed (the caller
counts them). Without workers (no second core, a worker that cannot start) parsing stays here.
"""

from __future__ import annotations

import marshal
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from protoagent.navigation.facts import FileFacts, dump_facts
from protoagent.navigation.js_facts import js_facts
from protoagent.navigation.python_facts import python_facts

PARALLEL_MIN_FILES = 64
"""Fewer files than this are parsed in this process (starting workers costs more)."""
MAX_WORKERS = 4
BATCH_FILES = 24


@dataclass(frozen=True, slots=True)
class Source:
    """A file's bytes to parse, as read beneath the root."""

    path: str
    revision: str
    module: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Parsed:
    """What the index stores of one parsed file."""

    path: str
    revision: str
    module: str
    blob: bytes
    keys: tuple[str, ...]
    definitions: tuple[tuple[str, str, str, int, int], ...]
    """``(name, qualname, kind, line, end_line)`` of each definition."""
    error: str


def extract(path: str, revision: str, module: str, data: bytes) -> FileFacts:
    """The facts of one file's bytes, by its language."""
    if path.endswith(".py"):
        return python_facts(path, revision, module, data.decode("utf-8", errors="replace"))
    return js_facts(path, revision, module, data)


def parse_source(source: Source) -> Parsed:
    facts = extract(source.path, source.revision, source.module, source.data)
    rows = tuple((d.name, d.qualname, d.kind, d.line, d.end_line) for d in facts.definitions)
    return Parsed(
        source.path, source.revision, source.module, dump_facts(facts), tuple(index_keys(facts)), rows, facts.error
    )


def parse_sources(sources: Sequence[Source], deadline: float) -> Iterator[Parsed]:
    """Parse ``sources`` until ``deadline`` (at least one batch), in workers when it pays."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if len(sources) < PARALLEL_MIN_FILES or workers < 2:
        yield from _serial(sources, deadline)
        return
    batches = [sources[i : i + BATCH_FILES] for i in range(0, len(sources), BATCH_FILES)]
    done: set[str] = set()
    try:
        for parsed in _parallel(batches, workers, deadline):
            done.add(parsed.path)
            yield parsed
    except (OSError, ValueError, EOFError):
        # No workers here (or one died): what is left is parsed in this process.
        yield from _serial([s for s in sources if s.path not in done], deadline)


def _serial(sources: Sequence[Source], deadline: float) -> Iterator[Parsed]:
    for number, source in enumerate(sources):
        if number and time.monotonic() > deadline:
            return
        yield parse_source(source)


def _parallel(batches: list[Sequence[Source]], workers: int, deadline: float) -> Iterator[Parsed]:
    """Batches handed to worker interpreters as they come free; none after the deadline."""
    queue = list(reversed(batches))
    procs = [_start_worker() for _ in range(min(workers, len(batches)))]
    busy: dict[int, subprocess.Popen[bytes]] = {}
    try:
        for proc in procs:
            _send(proc, queue.pop())
            busy[_stdout(proc).fileno()] = proc
        while busy:
            ready, _, _ = select.select(list(busy), [], [])
            for fd in ready:
                proc = busy.pop(fd)
                yield from (Parsed(*row) for row in _receive(proc))
                if queue and time.monotonic() <= deadline:
                    _send(proc, queue.pop())
                    busy[fd] = proc
    finally:
        for proc in busy.values():
            proc.kill()  # left mid-batch (the caller stopped early): its output is not wanted
        for proc in procs:
            _stop_worker(proc)


def _start_worker() -> subprocess.Popen[bytes]:
    # A fresh interpreter that imports only this module: not a fork of this process and its
    # threads, and never the program's main module again (as spawn would); -P keeps the working
    # folder off sys.path, and the working folder is not the repository.
    return subprocess.Popen(
        [sys.executable, "-P", "-m", __name__],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=tempfile.gettempdir(),
    )


def _stop_worker(proc: subprocess.Popen[bytes]) -> None:
    """End of input ends the worker; one that does not end in time is killed. Pipes are closed."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()
        proc.wait()
    finally:
        if proc.stdout is not None:
            proc.stdout.close()


def _stdout(proc: subprocess.Popen[bytes]) -> IO[bytes]:
    if proc.stdout is None:
        raise OSError("worker has no output pipe")
    return proc.stdout


def _send(proc: subprocess.Popen[bytes], batch: Sequence[Source]) -> None:
    if proc.stdin is None:
        raise OSError("worker has no input pipe")
    _write_frame(proc.stdin, [(s.path, s.revision, s.module, s.data) for s in batch])


def _receive(proc: subprocess.Popen[bytes]) -> list[tuple[Any, ...]]:
    rows = _read_frame(_stdout(proc))
    if rows is None:
        raise EOFError("a parse worker ended early")
    return list(rows)


def _write_frame(stream: IO[bytes], value: Any) -> None:
    blob = marshal.dumps(value)
    stream.write(len(blob).to_bytes(8, "big") + blob)
    stream.flush()


def _read_frame(stream: IO[bytes]) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        return None
    size = int.from_bytes(head, "big")
    blob = stream.read(size)
    if len(blob) < size:
        return None
    return marshal.loads(blob)


def serve() -> None:
    """A worker's loop: batches of sources in, their parsed rows out, until input ends."""
    while (batch := _read_frame(sys.stdin.buffer)) is not None:
        rows = []
        for path, revision, module, data in batch:
            parsed = parse_source(Source(path, revision, module, data))
            rows.append(
                (
                    parsed.path,
                    parsed.revision,
                    parsed.module,
                    parsed.blob,
                    parsed.keys,
                    parsed.definitions,
                    parsed.error,
                )
            )
        _write_frame(sys.stdout.buffer, rows)


def index_keys(facts: FileFacts) -> set[str]:
    """The names a file is found under: what it defines and uses, and what its aliases stand for."""
    keys = facts.names()
    keys.update([name.rpartition(".")[2] for name in keys if "." in name])
    keys.update(original for _, original in facts.imports.values() if original)
    for scope in facts.scopes.values():
        keys.update(original for _, original in scope.imports.values() if original)
    keys.update(chain[-1] for chain in facts.aliases.values())
    return keys


if __name__ == "__main__":
    serve()
