"""Re-reads of an unchanged source range: a receipt instead of the same text again.

Spec (application-harness): revision-aware tools return a receipt instead of rereading an
unchanged source range. At the model boundary, a result of a ``revision_aware`` tool whose
lines lie within an earlier result of the same tool in the agent's conversation, at the same
file revision, is shown as one line while that earlier result is still exact (not projected,
not marked stale):

    [unchanged since call read_1: dates.py lines 1-6 at revision 3f2a9c0d41be; the text is in
     that call's result above | if it is no longer there: recall(call_id="read_2")]

Once the earlier result is projected, the line says so and still names the recall. The
decision is made once per call and kept (``ProjectionState.rereads``), so a prefix never
changes back. A range the earlier read did not wholly show (other lines, a long line it cut),
a read after the file changed, or an agent that cannot ``recall`` gets the text as before.
The log keeps every read's full text; ``recall`` of the re-read returns it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from protoagent.context.staleness import SHOWN_REVISION_CHARS, read_facts
from protoagent.events.catalog import ToolEnded
from protoagent.events.types import Event


@dataclass(frozen=True, slots=True)
class ReadRange:
    """The lines a read result showed whole, at one revision of one file."""

    tool: str
    path: str
    revision: str
    start_line: int
    end_line: int


def read_range(event: Event) -> ReadRange | None:
    """The range a read's ``tool.ended`` event recorded, or ``None`` when it showed no whole lines."""
    facts = read_facts(event)
    ended = event.fact(ToolEnded)
    if facts is None or facts.start_line is None or facts.end_line is None or ended is None:
        return None
    if ended.data.get("truncated_long_line") is True or facts.end_line < facts.start_line:
        return None  # a long line cut short, or an empty file: nothing whole to point back to
    return ReadRange(ended.tool, facts.path, facts.revision, facts.start_line, facts.end_line)


def covers(earlier: ReadRange, later: ReadRange) -> bool:
    """Whether ``earlier`` showed every line ``later`` shows, of the same file at the same revision."""
    same = (earlier.tool, earlier.path, earlier.revision) == (later.tool, later.path, later.revision)
    return same and earlier.start_line <= later.start_line and later.end_line <= earlier.end_line


def unchanged_receipt(read: ReadRange, source_call: str, own_call: str, *, source_projected: bool) -> str:
    """The line that stands for a re-read of lines an earlier call ``source_call`` showed."""
    revision = read.revision[:SHOWN_REVISION_CHARS]
    where = (
        "that call's result was projected since | to see it again:"
        if source_projected
        else "the text is in that call's result above | if it is no longer there:"
    )
    return (
        f"[unchanged since call {source_call}: {read.path} lines {read.start_line}-{read.end_line} "
        f"at revision {revision}; {where} recall(call_id={json.dumps(own_call)})]"
    )


__all__ = ["ReadRange", "covers", "read_range", "unchanged_receipt"]
