"""The workflow graph: baseline → edit → final verification → at most two repairs."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from protoagent.agents.loop import AgentLoop, Budget, TurnOutcome
from protoagent.agents.presets import Preset
from protoagent.agents.profiles import ARCHITECT
from protoagent.agents.session import AgentSession
from protoagent.checks.receipts import receipt_excerpt, shown_tests, split_receipt
from protoagent.events.catalog import ToolEnded
from protoagent.events.types import Event
from protoagent.hooks.pipeline import HookRegistration
from protoagent.models.types import ToolCall
from protoagent.repair.guided import guided_repair, guided_repair_enabled
from protoagent.tools.base import AnyTool, Prepared, ToolContext, ToolOutput
from protoagent.workflow.board import TaskBoard
from protoagent.workflow.closing import (
    closing_hook,
    passing_verification,
    review_due,
    review_request,
    verified_summary,
)
from protoagent.workflow.contract import RunContract
from protoagent.workflow.deferral import honoured_at_once
from protoagent.workflow.evidence import (
    CheckResult,
    check_results,
    leaves_old_failures,
    names_a_test,
    outside_task,
    seeks_fix,
)
from protoagent.workflow.localized import (
    LOCALIZED_BUDGETS,
    failing_baseline_outputs,
    localized_spans,
    record_localized,
    render_localized,
)
from protoagent.workflow.objective_source import OBJECTIVE_BUDGETS, objective_spans, render_objective_source
from protoagent.workflow.offer import REVIEW_PHASE, declare_for_phase
from protoagent.workflow.phase_control import (
    PhaseControl,
    failing_final_check,
    first_denial,
    run_start,
)
from protoagent.workflow.progress import ProgressMonitor
from protoagent.workflow.regression_proof import prove_regression
from protoagent.workflow.signals import Denied, FinalCheckFailed, Reported, Verified, WorkerTurnLimit
from protoagent.workflow.task import TaskRecord
from protoagent.workflow.test_files import test_files_note
from protoagent.workflow.workers import WorkerRunner, file_writes, revision_current

MAX_REPAIRS = 2
MAX_CONTINUATIONS = 2
STOPPING_OUTCOMES = frozenset({"denied", "timed_out", "error", "cancelled"})
Transition = Literal["continue", "verify", "stop"]
"""After an Architect turn: continue unfinished work, go on to final checks, or end the phase."""


@dataclass(slots=True)
class GraphState:
    repairs: int = 0
    continuations: int = 0
    deferred: bool = False
    stop_reason: str = ""
    model_failed: bool = False
    stuck: str = ""
    """Why the lead was found stuck (the phase ended early), or empty."""
    closed_verified: bool = False
    """Passing final verification closed the edit phase without another Architect request."""
    summary: str = ""
    """The run's summary when the harness composed it (after a verified close), else empty."""


class WorkflowGraph:
    """A small state machine over Architect turns; the model never opens a repair itself."""

    def __init__(
        self,
        session: AgentSession,
        board: TaskBoard,
        contract: RunContract,
        runner: WorkerRunner,
        budget: Budget,
        role: Preset,
    ) -> None:
        self.session = session
        self.board = board
        self.contract = contract
        self.runner = runner
        self.budget = budget
        self.state = GraphState(deferred=contract.defer_verification)
        self._ids = itertools.count(1)
        self.architect = AgentLoop(session, agent=ARCHITECT, role=role, budget=budget)
        self.progress = ProgressMonitor()
        session.pipeline.post_execute.append(self._record_check_side_effects)

    async def run_editing(self, objective: str) -> GraphState:
        hooks = self.session.hooks
        hooks.register(HookRegistration("phase-control", PhaseControl.hook))
        hooks.register(HookRegistration("progress", self.progress.hook))
        hooks.register(HookRegistration("verified-close", closing_hook(self._record)))
        hooks.register(HookRegistration("phase-offer", declare_for_phase))
        self.session.pipeline.pre_execute.append(PhaseControl.gate(self.session.log))
        if honoured_at_once(self.state.deferred, objective, self.session.log.events):
            # "Don't run it, I'll do it" said after editing or final checks started (a later message
            # in the session): honoured at once, with no model call and no repair.
            self._phase("verification_deferred")
            self.state.stop_reason = "verification deferred: you said you will run the checks"
            return self.state
        await self._baseline()
        self._phase("edit")
        if await self._guided_repair():
            await self._final_checks()
            return self.state
        if self.state.stop_reason:  # guided repair searched and found nothing: the report says so
            return self.state
        outcome = await self.architect.run_turn(objective, context=await self._first_context(objective))
        continuable = True  # unfinished work left by the review's closing request is not continued
        while (step := self._transition(outcome)) != "stop":
            if step == "continue":
                continued = await self._continuation(outcome) if continuable else None
                if continued is None:
                    break
                outcome = continued
                continue
            if self.state.deferred:
                self._phase("verification_deferred")
                break
            if not file_writes(self.session.log.events):
                break
            failing = await self._final_checks()
            if not failing and not self.state.stop_reason and await self._review_still_due():
                # Checks cannot see every criterion: one closing request to confirm or repair. It
                # starts a fresh conversation: the criteria and the final diff are what it judges
                # (AGENTS.md rules stay in the system text, the task record is admitted again).
                self._phase(REVIEW_PHASE)
                self.architect.history_from = len(self.session.log)
                outcome = await self._turn(review_request(self.session.log.events, self.board.record))
                continuable = False
                continue
            if not failing or not self._may_repair(failing):
                break
            self.state.repairs += 1
            self._phase("repair", attempt=self.state.repairs)
            record = self.board.record
            outcome = await self._turn(_repair_message(failing, record.objective))
            continuable = True
        if self.state.stuck:
            await self._end_stuck()
        elif self.state.closed_verified and passing_verification(self.session.log.events, self.board.record):
            self.state.summary = verified_summary(self.session.log.events, self.board.record)
        return self.state

    async def _guided_repair(self) -> bool:
        """Small profile with a failing baseline: the harness-guided one-line repair (``repair``)."""
        if self.architect.role.profile != "small" or not guided_repair_enabled():
            return False
        outcome = await guided_repair(self.session, self.board.record.selected_check_ids)
        if outcome.applied:
            self.state.stop_reason = f"guided repair: {outcome.reason}"
        elif outcome.tried and outcome.status in ("none_passed", "model_failed"):
            # The small model's own turn after a failed search only loops or writes stray files.
            self.state.stop_reason = f"guided repair found no fix: {outcome.reason}"
        return outcome.applied

    async def run_verification(self) -> GraphState:
        await self._final_checks()
        return self.state

    async def _baseline(self) -> None:
        record = self.board.record
        if not record.baseline_check_ids:
            return
        self._phase("baseline")
        for check_id in record.baseline_check_ids:
            await self._run_check(check_id, "baseline")

    async def _first_context(self, objective: str) -> str | None:
        """What the Architect's first request carries besides the objective: baseline receipts,
        shown as evidence of the behaviour to change (each receipt's own header, the failing
        tests it named, a bounded excerpt of its output); when the baseline failed, the source of
        the few functions the failure involves; and the source of the exact symbols the objective
        names (both recorded as read by the Architect); after a passing baseline, the test modules
        the checks run (no failing test names them, and the lead would list folders to find them)."""
        events, profile = self.session.log.events, self.architect.role.profile
        baseline = [r for r in check_results(events) if r.phase == "baseline"]
        outputs = failing_baseline_outputs(events, run_start(events))
        spans = localized_spans(self.session.root, outputs, LOCALIZED_BUDGETS[profile]) if baseline else ()
        named = await asyncio.to_thread(  # the symbol index may build for a few seconds
            objective_spans,
            self.session.root,
            objective,
            OBJECTIVE_BUDGETS[profile],
            home=self.session.services.data_home,
            shown=spans,
        )
        record_localized(self.session.log, spans)
        record_localized(self.session.log, named)
        parts = [render_localized(spans), render_objective_source(named)]
        if baseline:
            receipts = "\n\n".join(receipt_excerpt(r.output, BASELINE_EXCERPT_CHARS) for r in baseline)
            parts.insert(0, "Baseline before any change (evidence, not a verdict on your work):\n" + receipts)
        if baseline and not outputs:  # no failing test names the tests: say where they are
            parts.insert(1, test_files_note(self.session.services.checks, objective) or "")
        return "\n\n".join(p for p in parts if p) or None

    async def _final_checks(self) -> list[CheckResult]:
        """Run every selected check that has no final run after the last change; return the failures."""
        self._phase("verify")
        events = self.session.log.events
        last_write = max((w.seq for w in file_writes(events)), default=0)
        after = max(last_write, run_start(events))  # the run's evidence covers its own checks only
        done = {r.id: r for r in check_results(events) if r.phase == "verify" and r.seq > after}
        for check_id in self.board.record.selected_check_ids:
            if check_id not in done:
                await self._run_check(check_id, "verify")
        final = self._finals(after)
        unavailable = [r for r in final.values() if r.outcome == "unavailable"]
        if unavailable:
            stays = "; the edits stay applied" if last_write else ""
            self.session.log.append(
                "verification.unavailable",
                {
                    "check_ids": [r.id for r in unavailable],
                    "note": "a check runner or external module is missing: install it (or configure "
                    f".protoagent/project.json) and run the checks yourself{stays}",
                },
            )
            self.state.stop_reason = "verification unavailable"
            return []
        stopping = [r for r in final.values() if r.outcome in STOPPING_OUTCOMES]
        if stopping:
            self.state.stop_reason = f"check {stopping[0].id!r} ended {stopping[0].outcome}"
            return []
        failing, in_scope = self._failing(final)
        if in_scope and all(r.only_preexisting for r in in_scope):
            # Only failures older than the change are left: the run's own tests, failing on the
            # unfixed source, show it did its part (a test it extended adds no count to compare).
            await prove_regression(self.session, self.board.record, in_scope)
            failing, in_scope = self._failing(self._finals(after))
        if failing and not in_scope:
            # Every failure left also failed at baseline: outside the task unless the objective names it.
            self.state.stop_reason = "the only failures left also failed before the change (at baseline)"
        return in_scope

    def _finals(self, after: int) -> dict[str, CheckResult]:
        """Each check's latest final run after ``after`` (the last change, or the run's start)."""
        return {r.id: r for r in check_results(self.session.log.events) if r.phase == "verify" and r.seq > after}

    def _failing(self, final: dict[str, CheckResult]) -> tuple[list[CheckResult], list[CheckResult]]:
        """The final runs that did not pass, and those of them that are this task's to fix."""
        failing = [r for r in final.values() if r.outcome != "passed" or r.tests_run == 0]
        return failing, [r for r in failing if not outside_task(r, self.board.record.objective)]

    async def _run_check(self, check_id: str, phase: str) -> None:
        call = ToolCall(f"verifier_{next(self._ids)}", "run_check", {"check_id": check_id, "phase": phase})
        await self.session.pipeline.run(call, agent="verifier", allowed=("run_check",))

    async def _continuation(self, outcome: TurnOutcome) -> TurnOutcome | None:
        """Unfinished work goes on in a further Architect turn, at most ``MAX_CONTINUATIONS`` times
        and only while the latest edit stands and nothing was denied; ``None`` when it may not."""
        self.session.log.append(
            "workflow.work_yielded", {"reason": outcome.text, "continuations": self.state.continuations}
        )
        if (
            self.state.continuations >= MAX_CONTINUATIONS
            or not self._stable_edits()
            or _denied_effects(self.session.log.events)
        ):
            self.state.stop_reason = "unfinished work after the allowed continuations"
            return None
        self.state.continuations += 1
        self.session.log.append("workflow.continuing", {"continuation": self.state.continuations})
        return await self._turn(
            "Continue the same task. Inspect the current source and finish one remaining part with a smaller "
            "Coder assignment. Applied edits stay; do not redo them."
        )

    async def _turn(self, text: str) -> TurnOutcome:
        self.architect.start_turn(text, kind="context.injected")
        outcome = await self.architect.run_steps(self.architect.role.max_steps)
        self.architect.end_turn(outcome)
        return outcome

    def _record(self) -> TaskRecord:
        return self.board.record

    def _review_due(self) -> bool:
        return review_due(self.session.log.events, self.board.record, self.architect.role.tools)

    async def _review_still_due(self) -> bool:
        """A closing request is due after passing final checks, unless the run's new tests prove
        the fix first (``workflow.regression_proof``: they fail on the unfixed source)."""
        if not self._review_due():
            return False
        passed = passing_verification(self.session.log.events, self.board.record)
        if passed:
            await prove_regression(self.session, self.board.record, passed)
        return self._review_due()

    def _stable_edits(self) -> bool:
        writes = file_writes(self.session.log.events)
        return bool(writes) and all(revision_current(self.session.root, w) for w in writes[-1:])

    def _is_stuck(self) -> bool:
        """True once the progress monitor found the lead stuck; records the reason once."""
        reason = self.progress.reason
        if reason is None:
            return False
        if not self.state.stuck:
            self.state.stuck = reason
            self.session.log.append("workflow.stuck", {"reason": reason})
        return True

    async def _end_stuck(self) -> None:
        """A stuck phase ends; edits it already applied still get their final checks (no repair)."""
        if file_writes(self.session.log.events) and not self.state.deferred:
            await self._final_checks()
        self.state.stop_reason = f"stuck: {self.state.stuck}"

    def _transition(self, outcome: TurnOutcome) -> Transition:
        """Where the edit phase goes after an Architect turn, by how the turn ended: one match over
        the workflow's signals (``workflow.signals``)."""
        if self._is_stuck():
            return "stop"
        match outcome:
            case TurnOutcome(status="failed"):
                self.state.model_failed = True
                self.state.stop_reason = outcome.text
                return "stop"
            case TurnOutcome(signal=Verified() as signal):
                # Every selected check passed after the last change: the phase is over, no summary request.
                self.state.closed_verified = True
                self.session.log.append("workflow.returned", {"reason": signal.reason})
                return "verify"
            case TurnOutcome(signal=FinalCheckFailed() as signal):
                # Control returns to the Graph, which reads the receipts and decides on a repair.
                failed = failing_final_check(self.session.log.events)
                ended = failed.fact(ToolEnded) if failed is not None else None
                check_id = ended.data.get("check_id") if ended is not None else None
                self.session.log.append("workflow.returned", {"reason": signal.reason, "check_id": check_id})
                return "verify"
            case TurnOutcome(signal=Denied()):
                self._denied(outcome.text)
                return "verify"
            case TurnOutcome(signal=WorkerTurnLimit() | Reported()):
                return "continue"
            case TurnOutcome(status="yielded"):
                return "stop"  # a stuck lead (caught above) or a signal the workflow does not raise
            case _ if _denied_effects(self.session.log.events):
                self._denied(outcome.text)
                return "verify"
            case _:
                return "verify"

    def _denied(self, detail: str) -> None:
        """A denial stops autonomous work: applied edits still get their final checks, never a repair."""
        self.session.log.append("workflow.returned", {"reason": "denied", "detail": detail})
        self.state.stop_reason = "an effect was denied; autonomous work stops"

    def _may_repair(self, failing: Sequence[CheckResult]) -> bool:
        if self.state.repairs >= MAX_REPAIRS:
            self.state.stop_reason = f"checks still fail after {MAX_REPAIRS} repairs"
            return False
        if _denied_effects(self.session.log.events):
            self.state.stop_reason = "an effect was denied; no autonomous repair"
            return False
        return bool(failing)

    def _phase(self, phase: str, **extra: object) -> None:
        self.session.log.append("workflow.phase", {"phase": phase, **extra})

    def _record_check_side_effects(
        self, tool: AnyTool, prepared: Prepared, output: ToolOutput, ctx: ToolContext
    ) -> ToolOutput:
        """A check that changed tracked files is a fact of the run (never an edit of the agent)."""
        files = output.data.get("changed_tracked_files") if tool.name == "run_check" else None
        if files:
            payload = {"check_id": output.data.get("check_id"), "phase": output.data.get("phase"), "files": files}
            self.session.log.append("check.changed_files", payload, agent=ctx.agent_role)
        return output


BASELINE_EXCERPT_CHARS = 1500


def _denied_effects(events: Sequence[Event]) -> bool:
    """An action of the current run was denied (earlier runs of a resumed session do not count)."""
    return first_denial(events, run_start(events)) is not None


def _repair_message(failing: Sequence[CheckResult], objective: str) -> str:
    """The repair turn's text: what failed; the task record is in the lead's conversation already
    (admission shows it once and appends its updates), so it is not repeated here."""
    measured = "\n\n".join(_measured(r, objective) for r in failing)
    return (
        f"Repair: final checks failed after the edits. Measured failure:\n{measured}\n\nGive Coder one "
        "focused repair assignment. The plan is frozen."
    )


def _measured(result: CheckResult, objective: str) -> str:
    """One failing check for a repair prompt: the failures to fix (new ones, and old ones the
    objective names) first; other failures that were there before the change are outside the task."""
    leave = leaves_old_failures(result, objective)
    old = [t for t in result.preexisting_failures if leave and not names_a_test(objective, t)]
    fix = [t for t in result.failed_tests if t not in old]
    header, body = split_receipt(result.output)
    head = header[0] if header else f"check {result.id} {result.phase}: {result.outcome}"
    if fix:
        head += f"; failing tests to fix: {shown_tests(fix)}"
    if old:
        # A bug report's own failing tests predate the change: leave them only when the objective
        # names the tests it is about or seeks no fix.
        named = any(names_a_test(objective, t) for t in result.failed_tests)
        advice = " (leave them)" if named or not seeks_fix(objective) else " (fix them if they are this task's bug)"
        head += f"; already failing before the change{advice}: {shown_tests(old)}"
    lines = [head, *(line for line in header[1:] if not line.startswith("failing tests: "))]
    return "\n".join([*lines, body] if body else lines)
