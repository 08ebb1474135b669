"""What a run reports (``RunReport``): built by the run as it ends, or read back from its log.

A live run and a recorded one give the same report: :meth:`RunReport.from_events` rebuilds it
from the facts the run appended (``session.created``, ``run.contract``, the ``run_check``
receipts, ``evidence.reported``, ``run.ended`` and the model calls' usage), and every interface
renders this one typed report (the CLI's report and ``--json``, ACP's final message, the SDK's
``read_report``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from protoagent.agents.definition import AppMode
from protoagent.agents.profiles import DEFAULT_LEADS
from protoagent.errors import SessionLoadError
from protoagent.events.catalog import EvidenceReported, RunEnded, SessionCreated
from protoagent.events.catalog import RunContract as RecordedContract
from protoagent.events.queries import last_fact
from protoagent.events.types import Event
from protoagent.events.usage import TokenTotals, run_token_totals
from protoagent.workflow.contract import Surface
from protoagent.workflow.evidence import Evidence, check_results

RunStatus = Literal["completed", "incomplete", "failed"]
RecordedStatus = RunStatus | Literal["cancelled"]
"""A recorded run's status: an interrupted run ends ``cancelled`` and returns no report."""


@dataclass(frozen=True, slots=True)
class RunReport:
    """The evidence report of one run; the session log holds every fact behind it."""

    session_id: str
    status: RecordedStatus
    surface: Surface | Literal["command"]
    """The request's surface; ``command`` for a person's own ``!command``."""
    evidence: Evidence
    summary: str
    notes: tuple[str, ...] = field(default=())
    mode: AppMode = "coding"
    """The session's persisted application mode."""
    lead: str | None = DEFAULT_LEADS["coding"]
    """The session's persisted lead agent (``None`` in a log that recorded none)."""
    tokens: TokenTotals = field(default_factory=lambda: TokenTotals(input=0, output=0, cached_input=0))
    """The run's model tokens: input (cached included), output and cached input."""

    def to_json(self) -> dict[str, Any]:
        e = self.evidence
        return {
            "session_id": self.session_id,
            "mode": self.mode,
            "lead": self.lead,
            "status": self.status,
            "surface": self.surface,
            "applied": e.applied,
            "verified": e.verified,
            "criteria_supported": e.criteria_supported,
            "criteria": [c.to_json() for c in e.criteria],
            "changed_files": list(e.changed_files),
            "external_effects": [dict(x) for x in e.external_effects],
            "checks": [c.to_json() for c in e.checks],
            "verification": e.verification,
            "summary": self.summary,
            "notes": list(self.notes),
            "tokens": dict(self.tokens),
        }

    @classmethod
    def from_events(cls, session_id: str, events: Sequence[Event]) -> RunReport:
        """The report of the session's latest run, from its log (``SessionLoadError`` when that
        run has not ended)."""
        found = last_fact(events, RunEnded)
        if found is None:
            raise SessionLoadError(session_id, "the run has not ended (no 'run.ended'); wait for it or resume it")
        ended = found[1]
        created = events[0].fact(SessionCreated)
        reported = last_fact(events, EvidenceReported)
        contract = last_fact(events, RecordedContract)
        evidence = Evidence.from_payload(reported[0].payload if reported else {}, check_results(events))
        return cls(
            session_id=session_id,
            status=ended.status,
            surface=cast(Surface, contract[1].surface if contract else "command"),
            evidence=evidence,
            summary=ended.summary,
            notes=evidence.notes,
            mode=cast(AppMode, created.mode if created else "coding"),
            lead=created.lead if created else None,
            tokens=run_token_totals(events),
        )
