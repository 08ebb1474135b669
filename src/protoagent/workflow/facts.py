"""Workflow facts read from the log: the queries the workflow's parts share over typed payloads
(generic ones, such as ``facts`` and ``tool_results``, are in ``events.queries``)."""

from __future__ import annotations

from collections.abc import Sequence

from protoagent.events.catalog import ToolEnded
from protoagent.events.queries import tool_results
from protoagent.events.types import Event

WRITE_TOOLS = frozenset({"edit_file", "create_file", "replace_file"})
"""Tools whose ``ok`` results are workspace writes the session made."""


def writes(events: Sequence[Event], agent: str | None = None, after_seq: int = 0) -> list[tuple[Event, ToolEnded]]:
    """Every applied workspace write (a write tool's ``ok`` result) after ``after_seq``, of
    ``agent`` when given, in log order."""
    return list(tool_results(events, WRITE_TOOLS, agent=agent, after=after_seq, status="ok"))
