"""Guided repair for the small profile: the harness localizes, the model proposes, the checks decide.

When the baseline fails, the failing check's output is localized to a few source functions
(``repair.localize``) whose every line is ranked (``repair.ranking``). The failing check is traced
in the scratch copy and general edit operators change the lines it ran (``repair.operator_search``);
then the model proposes one-line edits of those lines (``repair.candidates``). The search
(``repair.search``) tries them, and pairs of them in one function, in a scratch copy of the
workspace inside the run's sandbox (``repair.scratch``): the failing checks first, then the other
selected checks. The first candidate under which every selected check passes is applied to the
real workspace as Coder's ``edit_file`` call through the session's pipeline (approval, revision
guard, receipt). Every
candidate tried is an event; the search is bounded in candidates and seconds and stops between
candidates (and between tokens) when the run is cancelled.

``PROTOAGENT_GUIDED_REPAIR=off`` turns it off; ``PROTOAGENT_LOCAL_SEED`` seeds the sampling.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from protoagent.agents.session import AgentSession
from protoagent.checks.run_check import read_output
from protoagent.checks.types import CheckSpec
from protoagent.errors import ProviderError
from protoagent.events.catalog import ToolEnded, ToolStarted
from protoagent.events.types import Event
from protoagent.models.types import ToolCall
from protoagent.processes.command import NO_SANDBOX
from protoagent.processes.sandbox import asks_each_command
from protoagent.repair.candidates import REPAIR_AGENT, CandidateEdit, CandidateSource, ProviderCandidates
from protoagent.repair.edits import exact_span
from protoagent.repair.local_candidates import local_source
from protoagent.repair.localize import Localization, localize
from protoagent.repair.scratch import ScratchOptions, ScratchWorkspace
from protoagent.repair.search import Candidate, Search, SearchState
from protoagent.tools.approvals import ApprovalRequest
from protoagent.workspace.confined import read_confined

ENABLE_ENV = "PROTOAGENT_GUIDED_REPAIR"
SEED_ENV = "PROTOAGENT_LOCAL_SEED"
MAX_CANDIDATES = 160
"""Candidates tried in scratch checks, at most, per repair."""
MAX_SECONDS = 80.0
"""Seconds a repair may search before it gives the phase back to the Architect."""

Status = Literal["applied", "none_passed", "not_applied", "not_localized", "skipped", "model_failed"]


@dataclass(frozen=True, slots=True)
class RepairBudget:
    candidates: int = MAX_CANDIDATES
    seconds: float = MAX_SECONDS


@dataclass(slots=True)
class RepairOutcome:
    """How a guided repair ended."""

    status: Status
    reason: str
    tried: int = 0
    """Candidates whose checks ran in the scratch copy."""
    proposed: int = 0
    """Candidates the model proposed (syntax errors and repeats included)."""
    passed: tuple[CandidateEdit, ...] = ()
    """The passing candidate: one edit, or two of the same function."""

    @property
    def applied(self) -> bool:
        return self.status == "applied"


def guided_repair_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Off only when ``PROTOAGENT_GUIDED_REPAIR`` says ``off``, ``0``, ``false`` or ``no``."""
    value = (environ if environ is not None else os.environ).get(ENABLE_ENV, "on").strip().lower()
    return value not in ("off", "0", "false", "no")


def repair_seed(environ: Mapping[str, str] | None = None) -> int:
    """``PROTOAGENT_LOCAL_SEED`` as a number (0 when unset or not a number)."""
    raw = (environ if environ is not None else os.environ).get(SEED_ENV, "0")
    try:
        return int(raw)
    except ValueError:
        return 0


async def guided_repair(
    session: AgentSession,
    selected: Sequence[str],
    source: CandidateSource | None = None,
    budget: RepairBudget = RepairBudget(),
) -> RepairOutcome:
    """Search for a one- or two-line fix of a failing baseline and apply the first that passes every
    check in ``selected``; the outcome is recorded as ``repair.ended``."""
    if not _failing_baseline(session.log.events):
        return RepairOutcome("skipped", "the baseline did not fail")
    outcome = await _repair(session, selected, source, budget)
    payload = {"status": outcome.status, "reason": outcome.reason, "tried": outcome.tried}
    payload["proposed"] = outcome.proposed
    payload["passed"] = outcome.passed[0].to_json() if outcome.passed else None
    payload["also"] = [e.to_json() for e in outcome.passed[1:]]
    session.log.append("repair.ended", payload, agent="repair")
    return outcome


async def _approve_scratch_checks(
    session: AgentSession, checks: Sequence[CheckSpec], budget: RepairBudget, localization: Localization
) -> str | None:
    """Ask the session's pipeline (its policy, session rules and person, with the same events as a
    call's approval) before any model-written candidate runs: the scratch checks execute code the
    model wrote to copies of ``paths``, so they need what a check run needs. ``None`` when
    approved, else the reason it was not."""
    ids = ", ".join(c.id for c in checks)
    paths = tuple(dict.fromkeys(f.path for f in localization.functions))
    request = ApprovalRequest(
        call_id=f"repair-{session.log.session_id}-{len(session.log.events)}",
        tool="run_check",
        effect="execute",
        preview=(
            f"guided repair: apply up to {budget.candidates} candidate one- or two-line edits (general edit "
            f"operators' and the model's), one at a time, "
            f"to {', '.join(paths)} in a scratch copy of the workspace and run the checks {ids} there"
        ),
        paths=paths,
        agent=REPAIR_AGENT,
    )
    return await session.pipeline.approve(request)


async def _repair(
    session: AgentSession, selected: Sequence[str], source: CandidateSource | None, budget: RepairBudget
) -> RepairOutcome:
    services = session.services
    plan, processes = services.checks, services.processes
    sandbox = services.sandbox or NO_SANDBOX
    if plan is None or processes is None:
        return RepairOutcome("skipped", "the run has no check plan")
    if asks_each_command(sandbox):
        return RepairOutcome("skipped", "no sandbox: scratch checks would run without a person's approval")
    failing = _failing_baseline(session.log.events)
    checks = [c for c in (plan.get(i) for i in (*failing, *selected)) if c is not None]
    checks = list({c.id: c for c in checks}.values())
    localization = next((loc for loc in _localized(session.root, failing) if loc is not None), None)
    if not failing or localization is None:
        return RepairOutcome("not_localized", "no failing baseline check points at a source function")
    approved = await _approve_scratch_checks(session, checks, budget, localization)
    if approved is not None:
        return RepairOutcome("skipped", f"scratch checks not approved: {approved}")
    session.log.append("repair.started", _started(localization, checks), agent="repair")
    source = source or local_source(session.provider, repair_seed()) or ProviderCandidates(session.provider)
    python = services.python or "python3"
    options = ScratchOptions(failing=failing)
    with ScratchWorkspace(session.root, python, sandbox, processes=processes, options=options) as scratch:
        try:
            outcome = await _search(session, scratch, localization, source, checks, budget)
        except ProviderError as exc:
            # The model failed (its process crashed): the repair ends, the run goes on and reports.
            return RepairOutcome("model_failed", f"the model failed: {exc}")
    if not outcome.passed:
        return outcome
    return await _apply(session, outcome)


def _failing_baseline(events: Sequence[Event]) -> dict[str, str]:
    """Check id -> the full output of its latest failing baseline run (from the receipt's journal)."""
    requested: dict[str, str] = {}
    found: dict[str, str] = {}
    for e in events:
        if (started := e.fact(ToolStarted)) is not None and started.tool == "run_check":
            requested[started.call_id] = str(started.arguments.get("phase", "verify"))
        ended = e.fact(ToolEnded)
        if ended is None or ended.tool != "run_check":
            continue
        data = ended.data
        phase = data.get("phase") or requested.get(ended.call_id)
        if phase != "baseline" or data.get("outcome") != "failed":
            continue
        artifact = ended.artifact or data.get("artifact")
        found[str(data.get("check_id"))] = _journal(artifact) or ended.output
    return found


def _journal(artifact: object) -> str:
    if not isinstance(artifact, str) or not artifact:
        return ""
    try:
        return read_output(Path(artifact))
    except OSError:
        return ""


def _localized(root: Path, failing: Mapping[str, str]) -> list[Localization | None]:
    return [localize(root, output) for output in failing.values()]


def _started(localization: Localization, checks: Sequence[CheckSpec]) -> dict[str, Any]:
    return {
        "failed_tests": list(localization.failed_tests),
        "assertion": localization.evidence(),
        "functions": [
            {"path": f.path, "name": f.name, "start": f.start, "lines": list(f.ranked)} for f in localization.functions
        ],
        "check_ids": [c.id for c in checks],
    }


async def _search(
    session: AgentSession,
    scratch: ScratchWorkspace,
    localization: Localization,
    source: CandidateSource,
    checks: Sequence[CheckSpec],
    budget: RepairBudget,
) -> RepairOutcome:
    def record(index: int, edits: Candidate, failed: str | None) -> None:
        payload = {"index": index, **edits[0].to_json(), "also": [e.to_json() for e in edits[1:]]}
        session.log.append(
            "repair.candidate", {**payload, "passed": failed is None, "failed_check": failed}, agent="repair"
        )

    state = SearchState(time.monotonic(), budget.candidates, budget.seconds)
    await Search(scratch, localization, source, checks, state, record).run()
    return RepairOutcome("none_passed", state.reason, state.tried, state.proposed, state.passed)


async def _apply(session: AgentSession, outcome: RepairOutcome) -> RepairOutcome:
    """Apply the passing candidate as Coder's ``edit_file`` call through the governed pipeline."""
    edits = outcome.passed
    data = read_confined(session.root, edits[0].path)
    old, new = exact_span(data.decode("utf-8"), edits)
    arguments = {"path": edits[0].path, "old": old, "new": new, "expected_revision": hashlib.sha256(data).hexdigest()}
    result = await session.pipeline.run(
        ToolCall(f"repair_{outcome.tried}", "edit_file", arguments), agent="coder", allowed=("edit_file",)
    )
    if result.status != "ok":
        outcome.status = "not_applied"
        outcome.reason = f"the passing candidate was not applied: edit_file ended {result.status}"
        return outcome
    outcome.status = "applied"
    return outcome
