"""Completion evidence from receipts: ``applied``, ``verified`` and ``criteria_supported``.

Each :class:`CheckResult` holds the typed :class:`~protoagent.checks.receipts.CheckReceipt` its
``run_check`` call returned, read back from the log; :class:`Evidence` is written to the log as
the ``evidence.reported`` payload and read back from it by :meth:`Evidence.to_payload` and
:meth:`Evidence.from_payload`, so a live run and a recorded one report the same thing."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, cast

from protoagent.agents.trust import ignored_notes
from protoagent.checks.failures import short_name
from protoagent.checks.receipts import CheckReceipt, receipt_excerpt
from protoagent.events.catalog import EvidenceReported, RegressionProof, RunContract, ToolEnded, ToolStarted
from protoagent.events.types import Event
from protoagent.integrations.mcp_effects import diagnostics_notes, external_effects
from protoagent.workflow.contract import reports_bug
from protoagent.workflow.criteria import CriterionSupport, PassingCheck, criteria_support
from protoagent.workflow.facts import writes as applied_writes
from protoagent.workflow.phase_control import first_denial, run_start
from protoagent.workflow.reports import guided_repair_notes
from protoagent.workflow.task import TaskRecord, is_documentation_path
from protoagent.workflow.workers import file_writes, revision_current
from protoagent.workspace.confined import digest_regular

Verification = Literal[
    "verified", "failed", "unavailable", "deferred", "not_run", "stale", "no_checks", "denied", "untrusted"
]
"""``untrusted``: a final check ran with a runner (executable, interpreter) changed during the session."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One ``run_check`` call in the log: its receipt and how it compares with the baseline."""

    id: str
    phase: str
    outcome: str
    seq: int
    receipt: CheckReceipt | None = None
    """What the call measured (``None`` for a denied call: nothing ran)."""
    output: str = ""
    """Bounded tail of the check's output, for repair prompts and reports."""
    preexisting_failures: tuple[str, ...] = ()
    """The failed tests that also failed in the latest baseline of the same check before this result."""
    progressed: bool = False
    """Against that baseline, some failure is gone or more tests ran (the change's own tests)."""
    baseline_failures: tuple[str, ...] = ()
    """What the latest pre-change baseline of the same check named as failed (empty for a baseline)."""

    @property
    def tests_run(self) -> int | None:
        return self.receipt.tests_run if self.receipt is not None else None

    @property
    def unavailable_reason(self) -> str | None:
        return self.receipt.unavailable_reason if self.receipt is not None else None

    @property
    def failed_tests(self) -> tuple[str, ...]:
        """Test ids the runner named as failed."""
        return self.receipt.failed_tests if self.receipt is not None else ()

    @property
    def changed_tracked_files(self) -> tuple[str, ...]:
        """Tracked files the check run itself changed (revision capture before and after the run)."""
        return self.receipt.changed_tracked_files if self.receipt is not None else ()

    @property
    def changed_runner_files(self) -> tuple[str, ...]:
        """Runner files (executable, interpreter) that differed from the session's first revisions."""
        return self.receipt.changed_runner_files if self.receipt is not None else ()

    @property
    def new_failures(self) -> tuple[str, ...]:
        return tuple(t for t in self.failed_tests if t not in self.preexisting_failures)

    @property
    def fixed_tests(self) -> tuple[str, ...]:
        """Tests the pre-change baseline named as failed that this result does not."""
        return tuple(t for t in self.baseline_failures if t not in self.failed_tests)

    @property
    def only_preexisting(self) -> bool:
        """A failing result whose every named failure also failed at baseline."""
        return self.outcome == "failed" and bool(self.failed_tests) and not self.new_failures

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "phase": self.phase,
            "outcome": self.outcome,
            "tests_run": self.tests_run,
            "failed_tests": list(self.failed_tests),
            "preexisting_failures": list(self.preexisting_failures),
        }
        if self.changed_tracked_files:
            data["changed_tracked_files"] = list(self.changed_tracked_files)
        if self.changed_runner_files:
            data["changed_runner_files"] = list(self.changed_runner_files)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckResult:
        """A check as an ``evidence.reported`` payload recorded it (:meth:`to_json`): its receipt
        holds what that names, and its position in the log (``seq``) and output are not kept."""
        check_id = str(data.get("id", ""))
        receipt = CheckReceipt.from_data({**data, "check_id": check_id})
        preexisting = tuple(str(t) for t in data.get("preexisting_failures") or ())
        return cls(check_id, str(data.get("phase", "")), str(data.get("outcome", "")), 0, receipt, "", preexisting)


@dataclass(frozen=True, slots=True)
class Evidence:
    applied: bool
    verified: bool
    criteria_supported: bool
    changed_files: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    verification: Verification
    notes: tuple[str, ...] = field(default=())
    external_effects: tuple[dict[str, Any], ...] = field(default=())
    """MCP calls that may have acted outside the workspace (see ``integrations.mcp_effects``)."""
    criteria: tuple[CriterionSupport, ...] = field(default=())
    """Each recorded criterion (the objective when none) and what supports it (``workflow.criteria``)."""

    def to_payload(self) -> dict[str, Any]:
        """The ``evidence.reported`` payload: what the run's report says, its checks included."""
        return {
            "applied": self.applied,
            "verified": self.verified,
            "criteria_supported": self.criteria_supported,
            "criteria": [c.to_json() for c in self.criteria],
            "verification": self.verification,
            "checks": [c.to_json() for c in self.checks],
            "changed_files": list(self.changed_files),
            "external_effects": [dict(x) for x in self.external_effects],
            "notes": list(self.notes),
        }

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any], checks: Sequence[CheckResult]) -> Evidence:
        """The evidence an ``evidence.reported`` payload recorded (``{}``: none was); ``checks``
        stand for the checks of a payload recorded before evidence named them."""
        reported = EvidenceReported.model_validate(payload)
        if reported.checks is not None:
            checks = [CheckResult.from_json(c) for c in reported.checks]
        return cls(
            applied=reported.applied,
            verified=reported.verified,
            criteria_supported=reported.criteria_supported,
            changed_files=tuple(reported.changed_files),
            checks=tuple(checks),
            verification=cast(Verification, reported.verification),
            notes=tuple(reported.notes),
            external_effects=tuple(reported.external_effects),
            criteria=tuple(CriterionSupport.from_json(c) for c in reported.criteria),
        )


def check_results(events: Sequence[Event]) -> list[CheckResult]:
    """Every run_check receipt in the log, in order. A denied call counts with its requested id
    and phase, so a denial is never mistaken for a missing run; a rejected call ran nothing and
    asked for nothing runnable, so it is no result. Failures are compared with the latest
    baseline measured before the run's first change: a "baseline" run after an edit measures the
    changed code, so it cannot say what failed before the change."""
    requested: dict[str, dict[str, Any]] = {}
    results = []
    baselines: dict[str, tuple[tuple[str, ...], int]] = {}
    changed = False
    for e in events:
        if e.fact(RunContract) is not None:
            changed = False
        elif file_writes([e]):
            changed = True
        if (started := e.fact(ToolStarted)) is not None and started.tool == "run_check":
            requested[started.call_id] = started.arguments
        ended = e.fact(ToolEnded)
        if ended is None or ended.tool != "run_check":
            continue
        data = ended.data
        asked = requested.get(ended.call_id, {})
        check_id = data.get("check_id", asked.get("check_id"))
        if not isinstance(check_id, str):
            continue
        status = ended.status
        if status == "rejected":
            continue
        outcome = str(data.get("outcome") or status) if status != "denied" else status
        phase = str(data.get("phase") or asked.get("phase") or "verify")
        receipt = CheckReceipt.from_data(data)
        failed = receipt.failed_tests if receipt is not None else ()
        tests_run = receipt.tests_run if receipt is not None else None
        before, ran_before = baselines.get(check_id, ((), 0)) if phase != "baseline" else ((), 0)
        if phase == "baseline" and not changed:
            baselines[check_id] = (failed, int(tests_run or 0))
        progressed = bool(set(before) - set(failed)) or int(tests_run or 0) > ran_before
        output = receipt_excerpt(ended.output)
        preexisting = tuple(t for t in failed if t in before)
        results.append(CheckResult(check_id, phase, outcome, e.seq, receipt, output, preexisting, progressed, before))
    return [_proved_progress(r, events) for r in results]


def _proved_progress(result: CheckResult, events: Sequence[Event]) -> CheckResult:
    """``result`` as progress when a regression proof of its check after it, with no change
    between, found the run's own tests failing on the unfixed source: the change did what the
    tests ask even though failures older than it are left (a test it only extended adds none)."""
    if result.phase != "verify" or result.progressed:
        return result
    for e in events:
        if e.seq <= result.seq:
            continue
        if file_writes([e]):
            return result
        proof = e.fact(RegressionProof)
        if proof is not None and proof.check_id == result.id and proof.outcome == "proved":
            return replace(result, progressed=True)
    return result


def dependencies_current(root: Path, result: CheckResult) -> bool:
    """Every file the result's receipt measured still has the revision it measured."""
    revisions = result.receipt.dependency_revisions if result.receipt is not None else {}
    for rel, digest in revisions.items():
        try:
            current = digest_regular(root / rel)  # never opens a FIFO a command left in its place
        except OSError:
            current = None
        if current != digest:
            return False
    return True


def compute_evidence(
    events: Sequence[Event], root: Path, record: TaskRecord, *, deferred: bool = False, criteria: bool = True
) -> Evidence:
    """Evidence rules from spec/task-workflow.txt "Completion evidence"; ``criteria=False`` for a
    surface without coding criteria (a question, a conversation, a verification request)."""
    written = applied_writes(events)
    writes = [w for w, _ in written]
    latest = {str(ended.data.get("path")): w for w, ended in written}
    changed = tuple(latest)
    applied = bool(latest) and all(revision_current(root, w) for w in latest.values())
    last_write = max((w.seq for w in writes), default=0)
    results = check_results(events)
    notes: list[str] = []
    final: dict[str, CheckResult] = {}
    for r in results:
        if r.phase == "verify" and r.seq > last_write:
            final[r.id] = r
    selected = record.selected_check_ids
    measured: list[str] = []
    verification = _verification(selected, final, root, results, last_write, measured, applied, record.objective)
    if deferred:
        verification = _deferred(verification, measured, events)
    notes += measured
    verified = verification == "verified"
    docs_only = bool(changed) and all(is_documentation_path(p) for p in changed)
    if record.unresolved_reports:
        notes.append(
            "unresolved worker report(s): " + ", ".join(f"{r.role} {r.status}" for r in record.unresolved_reports)
        )
    passing = [PassingCheck(c, final[c].fixed_tests) for c in selected] if verified else []
    judged = criteria_support(events, record, passing, seeks_fix=seeks_fix(record.objective)) if criteria else ()
    notes += [
        f"criterion {c.text!r} is unsupported: no passing check covers it and no review of the final diff affirms it"
        for c in judged
        if c.support == "unsupported"
    ]
    supported = (
        applied
        and (verified or docs_only)
        and not record.unresolved_reports
        and all(c.support != "unsupported" for c in judged)
    )
    if changed and not applied:
        notes.append("some changed files no longer match the revision this run wrote")
    notes += _tracked_change_notes(results)
    notes += diagnostics_notes(events)
    notes += ignored_notes(events)
    notes += guided_repair_notes(events)
    effects = tuple(external_effects(events))
    return Evidence(applied, verified, supported, changed, tuple(results), verification, tuple(notes), effects, judged)


def _verification(
    selected: Sequence[str],
    final: dict[str, CheckResult],
    root: Path,
    results: Sequence[CheckResult],
    last_write: int,
    notes: list[str],
    applied: bool = False,
    objective: str = "",
) -> Verification:
    if not selected:
        notes.append("no checks are selected, so nothing can verify a code change")
        return "no_checks"
    missing = [c for c in selected if c not in final]
    if missing and last_write == 0:
        notes.append("no file change was applied, so there was nothing to verify")
        return "not_run"
    if missing:
        stale = [r.id for r in results if r.phase == "verify" and r.seq < last_write and r.id in missing]
        if stale:
            notes.append(f"final check(s) {sorted(set(stale))} ran before the last change: their evidence is stale")
            return "stale"
        notes.append(f"selected check(s) {missing} have no final run")
        return "not_run"
    outcomes = {c: final[c] for c in selected}
    unavailable = [r for r in outcomes.values() if r.outcome == "unavailable"]
    if unavailable:
        stays = " — the edits stay applied" if applied else ""
        for r in unavailable:
            why = r.unavailable_reason or "its runner or an external module is missing"
            notes.append(
                f"setup: check {r.id!r} could not run ({why}); install what it needs or configure "
                f".protoagent/project.json, then run it yourself{stays}"
            )
        return "unavailable"
    denied = [c for c, r in outcomes.items() if r.outcome == "denied"]
    if denied:
        notes.append(f"check(s) {denied} were denied, so nothing measured the change")
        return "denied"
    for c, r in outcomes.items():
        if r.changed_runner_files:
            files = ", ".join(
                str(Path(f).relative_to(root)) if Path(f).is_relative_to(root) else f for f in r.changed_runner_files
            )
            notes.append(
                f"check {c!r} ran with a runner changed during this session ({files}): "
                "its result is not verification evidence"
            )
            return "untrusted"
        if r.tests_run == 0:
            notes.append(f"check {c!r}: zero tests ran; zero tests never verify a change")
            return "failed"
        if r.outcome != "passed":
            notes.append(_failure_note(c, r, objective))
            return "failed"
        if not dependencies_current(root, r):
            notes.append(f"files check {c!r} depends on changed after it ran")
            return "stale"
    return "verified"


def _deferred(verification: Verification, notes: list[str], events: Sequence[Event]) -> Verification:
    """The person said they will run the checks. Denied actions and stale results still take
    precedence, a verification the receipts already give stands, and earlier failures stay noted."""
    if verification in ("denied", "stale", "untrusted", "verified"):
        return verification
    denial = first_denial(events, run_start(events))
    if denial is not None:
        notes[:] = [f"{denial.tool} was denied, so autonomous work stopped; nothing verified the change"]
        return "denied"
    kept = notes[:] if verification == "failed" else []
    notes[:] = ["verification deferred: you said you will run the checks", *kept]
    return "deferred"


def _tracked_change_notes(results: Sequence[CheckResult]) -> list[str]:
    """One note per check run that changed tracked files: the check did it, not this run's edits."""
    return [
        f"check {r.id!r} ({r.phase}) changed tracked files: {', '.join(r.changed_tracked_files)}; "
        "the check did this, they are not edits of this run"
        for r in results
        if r.changed_tracked_files
    ]


_SEEKS_FIX = re.compile(r"\b(?:fix\w*|fail\w*|bug\w*|broken|repair\w*|crash\w*|regression)\b|\bmake\b.*\bpass", re.I)


def names_a_test(objective: str, test_id: str) -> bool:
    """True when the objective names the test (its last component, over three characters)."""
    name = short_name(test_id)
    return len(name) > 3 and name.lower() in objective.lower()


def seeks_fix(objective: str) -> bool:
    """True when the objective asks to fix failures (a failing test, a bug, a crash) or reports
    a bug without a verb ("X returns Y instead of Z"): the tests it fixed support it."""
    return _SEEKS_FIX.search(objective) is not None or reports_bug(objective)


def leaves_old_failures(result: CheckResult, objective: str) -> bool:
    """Whether failures that predate the change (and that the objective does not name) are left
    alone: after progress against the baseline, when the objective names the tests it is about,
    or when it is not about fixing failures at all."""
    named = any(names_a_test(objective, t) for t in result.failed_tests)
    return result.progressed or named or not seeks_fix(objective)


def outside_task(result: CheckResult, objective: str) -> bool:
    """True when what still fails was already failing before the change and is not this task's
    work: the objective does not name those tests, and either the change made progress against
    the baseline (its own tests pass, or some old failures are gone) or the objective is not about
    fixing failures at all ("add a docstring" in a repository with a broken test)."""
    if not result.only_preexisting or any(names_a_test(objective, t) for t in result.failed_tests):
        return False
    return leaves_old_failures(result, objective)


def _failure_note(check_id: str, result: CheckResult, objective: str) -> str:
    """Why a final check did not verify, naming tests the runner named."""
    if result.outcome in ("error", "timed_out"):
        return f"check {check_id!r} {'timed out' if result.outcome == 'timed_out' else 'could not finish'}"
    if outside_task(result, objective):
        names = ", ".join(result.preexisting_failures)
        return (
            f"check {check_id!r}: {names} failed before the change too (at baseline) and are outside this task; "
            "every other test it ran passes"
        )
    if result.new_failures:
        before = result.preexisting_failures
        old = f" (also failing at baseline: {', '.join(before)})" if before else ""
        return f"check {check_id!r} failed: {', '.join(result.new_failures)}{old}"
    if result.failed_tests:
        names = ", ".join(result.failed_tests)
        return f"check {check_id!r} failed: {names}, which also failed before the change; the change did not fix them"
    return f"check {check_id!r} failed"
