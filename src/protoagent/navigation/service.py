"""The navigation service: one refreshed index per repository root, answers with their notes."""

from __future__ import annotations

import threading
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.excerpts import excerpt
from protoagent.json_form import json_form
from protoagent.navigation.index import INDEX_TIME_LIMIT_S, SymbolIndex, cache_file, default_home
from protoagent.navigation.query import MAX_RESULTS, Answer, Operation, ask

MAX_LINE_CHARS = 300
MAX_NOTE_CHARS = 800
MAX_OPEN = 16
"""Indexes kept open per process; the oldest is closed beyond this (its cache stays on disk)."""
_OPEN: dict[tuple[Path, Path], SymbolIndex] = {}
_LOCK = threading.Lock()


def index_for(root: Path, home: Path | None = None) -> SymbolIndex:
    """The index of ``root`` cached under ``home`` (the data home by default), opened once per process."""
    cache = cache_file(home or default_home(), root)
    with _LOCK:
        found = _OPEN.get((root, cache))
        if found is None:
            if len(_OPEN) >= MAX_OPEN:
                _OPEN.pop(next(iter(_OPEN))).close()
            found = SymbolIndex(root, cache)
            _OPEN[(root, cache)] = found
        return found


def answer(
    root: Path,
    operation: Operation,
    symbol: str,
    under: str | None = None,
    *,
    home: Path | None = None,
    limit: int = MAX_RESULTS,
    time_limit_s: float = INDEX_TIME_LIMIT_S,
) -> Answer:
    """Refresh the index of ``root`` (within ``time_limit_s``) and answer one operation on ``symbol``."""
    index = index_for(root, home)
    report = index.refresh(time_limit_s)
    incomplete = (
        f"index incomplete: {report.left} of {report.files} source files not indexed yet "
        f"(time limit {time_limit_s:g}s); results may miss matches; call again to continue"
    )
    try:
        with index.lock:  # one answer reads one state of the index (another session may refresh it)
            result = ask(index, operation, symbol, under, limit)
    except ToolRejected as rejected:
        if report.left and rejected.kind == "unknown_symbol":
            raise ToolRejected(
                f"{rejected.message}; {incomplete}", kind=rejected.kind, details=rejected.details
            ) from None
        raise
    if report.left:
        result.notes.append(incomplete)
    result.notes.extend(index.notes)
    return result


def render(result: Answer) -> str:
    """The answer as the model reads it: one ``path:line`` per result, then the notes."""
    one = len(result.matched) == 1
    head = f"{result.operation} of {result.symbol!r}"
    if one and result.matched[0] != result.symbol:
        head += f" ({result.matched[0]})"
    shown = len(result.results)
    counted = f"{shown} of {result.total}" if result.total > shown else str(result.total)
    lines = [_bounded(f"{head}: {counted}")]
    for hit in result.results:
        name = "" if one and hit.symbol == result.matched[0] and result.operation == "references" else f" {hit.symbol}"
        span = f"-{hit.end_line}" if hit.end_line and hit.end_line != hit.line else ""
        via = f" called at {hit.via}" if hit.via else ""
        line = f"{hit.path}:{hit.line}{span} {hit.kind}{name} in {hit.enclosing}{via} rev {hit.revision[:12]}"
        lines.append(_bounded(line))  # paths and names come from the repository
    lines.extend(excerpt(f"note: {note}", MAX_NOTE_CHARS) for note in result.notes)
    return "\n".join(lines)


def _bounded(line: str) -> str:
    """At most ``MAX_LINE_CHARS`` characters, the cut marked (room is left for the marker)."""
    return line if len(line) <= MAX_LINE_CHARS else excerpt(line, MAX_LINE_CHARS - 32)


def to_json(result: Answer) -> dict[str, object]:
    return json_form(result)
