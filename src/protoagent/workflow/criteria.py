"""What supports each acceptance criterion: a check, the lead's review of the final diff, or nothing.

Spec: "Criteria supported means the application's required evidence is satisfied. Passing the
configured checks does not prove every requested semantic property." So a criterion has check
support only when it names what a passing final check measured: a selected check id, a test the
change turned from failing (at the pre-change baseline) to passing, or the test file holding such
a test. No keyword guessing: "CHANGELOG.md gets a bullet" names nothing a check can see. The
lead may instead review the final diff and say which criteria it meets (``review_criteria``
after the last change); that support is labelled ``review``, never ``check``. A run whose plan
recorded no criteria has one: its objective, which checks support only when it asks for a fix
and every failure the baseline measured before the change now passes. A test the run's
regression proof found failing on the unfixed source (``workflow.regression_proof``, recorded
after the run's last change) counts as a test the change turned from failing to passing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pydantic import BaseModel, Field

from protoagent.agents.profiles import LEADS
from protoagent.checks.failures import short_name
from protoagent.errors import ToolRejected
from protoagent.events.catalog import RegressionProof
from protoagent.events.queries import facts, tool_results
from protoagent.events.types import Event
from protoagent.json_form import json_form
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workflow.phase_control import run_start
from protoagent.workflow.task import TaskRecord
from protoagent.workflow.task_tools import board_of
from protoagent.workflow.workers import file_writes

Support = Literal["check", "review", "unsupported"]
REVIEW_TOOL = "review_criteria"


@dataclass(frozen=True, slots=True)
class CriterionSupport:
    """One recorded criterion and what supports it."""

    text: str
    support: Support
    evidence: tuple[str, ...] = ()
    """Check ids or test ids that cover it (``check``), or ``review:<seq>`` (``review``)."""

    def to_json(self) -> dict[str, Any]:
        return json_form(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CriterionSupport:
        """The criterion an ``evidence.reported`` payload recorded."""
        support = cast(Support, data.get("support", "unsupported"))
        return cls(str(data.get("text", "")), support, tuple(str(e) for e in data.get("evidence", ())))


@dataclass(frozen=True, slots=True)
class PassingCheck:
    """A selected check whose final run passed, and the tests it turned from failing to passing."""

    id: str
    fixed_tests: tuple[str, ...]


def recorded_criteria(record: TaskRecord) -> tuple[str, ...]:
    """The plan's criteria, or the objective when the plan recorded none."""
    return record.criteria or (record.objective,)


def criteria_support(
    events: Sequence[Event], record: TaskRecord, passing: Sequence[PassingCheck], *, seeks_fix: bool
) -> tuple[CriterionSupport, ...]:
    """Per recorded criterion, the evidence that supports it (see the module docstring)."""
    reviewed, review_seq = _final_review(events)
    proven = _proven(events)
    passing = [PassingCheck(p.id, tuple(dict.fromkeys((*p.fixed_tests, *proven.get(p.id, ()))))) for p in passing]
    out = []
    for index, text in enumerate(recorded_criteria(record), start=1):
        covered = _named_evidence(text, passing)
        if not record.criteria and not covered and seeks_fix:
            covered = tuple(dict.fromkeys(t for p in passing for t in p.fixed_tests))
        if covered:
            out.append(CriterionSupport(text, "check", covered))
        elif index in reviewed:
            out.append(CriterionSupport(text, "review", (f"review:{review_seq}",)))
        else:
            out.append(CriterionSupport(text, "unsupported"))
    return tuple(out)


def _named_evidence(text: str, passing: Sequence[PassingCheck]) -> tuple[str, ...]:
    """The check ids, fixed test ids and fixed tests' files ``text`` names (whole words only)."""
    found: list[str] = []
    for check in passing:
        if _names(text, check.id):
            found.append(check.id)
        for test in check.fixed_tests:
            if _names(text, test) or _names(text, short_name(test)) or _names(text, _test_file(test)):
                found.append(test)
    return tuple(dict.fromkeys(found))


def _names(text: str, word: str) -> bool:
    if len(word) <= 3:
        return False
    return re.search(rf"(?<![\w.:/-]){re.escape(word)}(?![\w:/-])", text) is not None


def _test_file(test_id: str) -> str:
    """The file a test id points at: ``tests/test_x.py::t`` → ``tests/test_x.py``; a unittest id
    ``test_x.T.t`` → ``test_x.py``; empty when the id names no file."""
    if "::" in test_id:
        return test_id.split("::")[0]
    module = test_id.split(".")[0]
    return f"{module}.py" if module and module != test_id else ""


def _proven(events: Sequence[Event]) -> dict[str, tuple[str, ...]]:
    """Check id -> the tests a regression proof after the run's last change proved (a proof that
    did not prove anything, or one a later change made stale, proves nothing)."""
    start = run_start(events)
    last_write = max((w.seq for w in file_writes(events, after_seq=start)), default=start)
    return {
        proof.check_id: tuple(proof.proven_tests)
        for _, proof in facts(events, RegressionProof, after=last_write)
        if proof.outcome == "proved"
    }


def _final_review(events: Sequence[Event]) -> tuple[frozenset[int], int]:
    """The criteria (1-based) the lead's latest review after the run's last change affirms."""
    start = run_start(events)
    last_write = max((w.seq for w in file_writes(events, after_seq=start)), default=start)
    for event, ended in tool_results(reversed(events), (REVIEW_TOOL,), after=last_write, status="ok"):
        met = ended.data.get("met") or ()
        return frozenset(int(i) for i in met), event.seq
    return frozenset(), 0


class ReviewArgs(BaseModel):
    met: list[int] = Field(description="1-based criteria positions")
    note: str = Field("", description="what you checked in the diff")


class ReviewCriteria(Tool[ReviewArgs]):
    name = REVIEW_TOOL
    description = "After the last change: the criteria no check measures that the final diff meets."
    input_model = ReviewArgs
    metadata = ToolMetadata(effect="none", observation="exact", roles=LEADS)

    def prepare(self, args: ReviewArgs, ctx: ToolContext) -> Prepared:
        criteria = recorded_criteria(board_of(ctx).record)
        wrong = [i for i in args.met if not 1 <= i <= len(criteria)]
        if wrong:
            raise ToolRejected(
                f"criteria positions {wrong} do not exist; the record has {len(criteria)} (1-{len(criteria)})",
                kind="unknown_criteria",
                details={"criteria": list(criteria)},
            )
        return Prepared(preview=f"review: criteria {args.met}", effect="none", state=args)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        args: ReviewArgs = prepared.state
        criteria = recorded_criteria(board_of(ctx).record)
        met = sorted(set(args.met))
        lines = [f"review recorded for criteria {met or 'none'}; a later change makes it stale"]
        lines += [f"{i}. {criteria[i - 1]}" for i in met]
        return ToolOutput("\n".join(lines), data={"met": met, "note": args.note})


CRITERIA_TOOLS = (ReviewCriteria,)
