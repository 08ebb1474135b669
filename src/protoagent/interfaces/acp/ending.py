"""How a prompt ends in the editor: the run's final message and the matching ACP stop reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from protoagent.agents.profiles import LEADS
from protoagent.events.catalog import ModelDelta, ModelFailed, TurnEnded

if TYPE_CHECKING:
    from protoagent.events.types import Event
    from protoagent.workflow.run import RunReport

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


@dataclass(slots=True)
class RunWatch:
    """What one prompt's run showed the editor so far: the lead's streamed words and whether the
    run's model-call budget or the lead's steps ran out."""

    streamed: list[str] = field(default_factory=list)
    limited: bool = False

    def see(self, event: Event) -> None:
        if (failed := event.fact(ModelFailed)) is not None and failed.limit is not None:
            self.limited = True  # the run's shared model-call budget ran out, whichever agent asked
        if event.agent not in LEADS:
            return
        if (delta := event.fact(ModelDelta)) is not None:
            self.streamed.append(delta.text)
        elif (ended := event.fact(TurnEnded)) is not None:
            self.limited = ended.status == "limit"

    def stop_reason(self) -> StopReason:
        """``max_turn_requests`` when the lead's budget ran out, else ``end_turn`` (a failed run
        ends its turn too; its final message says why)."""
        return "max_turn_requests" if self.limited else "end_turn"

    def final_message(self, report: RunReport) -> str:
        """The report as the editor's last words: status, summary (unless the lead already said
        it), checks and notes. Empty for a completed conversation whose reply was streamed."""
        said = "".join(self.streamed)
        summary = report.summary.strip()
        lines: list[str] = []
        if summary and summary not in said:
            lines.append(summary)
        checks = [f"- {c.id} ({c.phase}): {c.outcome}" for c in report.evidence.checks]
        notes = [f"- {note}" for note in report.notes]
        changed = report.evidence.changed_files
        if changed:
            lines.append("Changed: " + ", ".join(changed))
        if checks:
            lines += ["Checks:", *checks]
        if notes:
            lines += ["Notes:", *notes]
        quiet = report.status == "completed" and report.surface in ("conversation", "question")
        if quiet and not lines:
            return ""
        verified = " · verified" if report.evidence.verified else ""
        head = f"── {report.status}{verified} · session {report.session_id}"
        return "\n\n" + "\n".join([*lines, head]) + "\n"
