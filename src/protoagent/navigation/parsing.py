"""Parsing many files for the index: in worker processes when there are enough, within a deadline.

A worker only turns bytes into facts (``ast`` or tree-sitter); it reads no file and runs nothing
of the project. Files left when the deadline passes are not parsed (the caller counts them).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

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


def _parse_batch(batch: Sequence[Source]) -> list[Parsed]:
    return [parse_source(s) for s in batch]


def parse_sources(sources: Sequence[Source], deadline: float) -> Iterator[Parsed]:
    """Parse ``sources`` until ``deadline`` (at least one batch), in workers when it pays."""
    workers = min(os.cpu_count() or 1, MAX_WORKERS)
    if len(sources) < PARALLEL_MIN_FILES or workers < 2:
        yield from _serial(sources, deadline)
        return
    batches = [sources[i : i + BATCH_FILES] for i in range(0, len(sources), BATCH_FILES)]
    done = 0
    try:
        for parsed in _parallel(batches, workers, deadline):
            done += 1
            yield parsed
    except (BrokenProcessPool, OSError):
        yield from _serial(sources[done:], deadline)  # no workers here: parse in this process


def _serial(sources: Sequence[Source], deadline: float) -> Iterator[Parsed]:
    for number, source in enumerate(sources):
        if number and time.monotonic() > deadline:
            return
        yield parse_source(source)


def _parallel(batches: list[Sequence[Source]], workers: int, deadline: float) -> Iterator[Parsed]:
    # Forked workers start at once and share what is loaded; elsewhere fork is unsafe, so spawn.
    method = "fork" if sys.platform.startswith("linux") else "spawn"
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))
    pending: dict[Future[list[Parsed]], int] = {}
    queue = list(reversed(batches))
    try:
        while queue or pending:
            while queue and len(pending) < 2 * workers and (not pending or time.monotonic() <= deadline):
                batch = queue.pop()
                pending[pool.submit(_parse_batch, batch)] = len(batch)
            if time.monotonic() > deadline:
                queue.clear()
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                pending.pop(future)
                yield from future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def index_keys(facts: FileFacts) -> set[str]:
    """The names a file is found under: what it defines and uses, and what its aliases stand for."""
    keys = facts.names()
    keys.update([name.rpartition(".")[2] for name in keys if "." in name])
    keys.update(original for _, original in facts.imports.values() if original)
    for scope in facts.scopes.values():
        keys.update(original for _, original in scope.imports.values() if original)
    keys.update(chain[-1] for chain in facts.aliases.values())
    return keys
