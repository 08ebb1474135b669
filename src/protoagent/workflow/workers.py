"""Worker inferences run as owned children of the run: Coder windows and the Tester."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from protoagent.agents.compile import EffectiveAgent
from protoagent.agents.loop import AgentLoop, Budget, TurnOutcome
from protoagent.agents.presets import Preset
from protoagent.agents.profiles import ARCHITECT, CODER, EXPLORER, TESTER
from protoagent.agents.session import AgentSession
from protoagent.errors import ToolRejected, YieldControl
from protoagent.events.catalog import ModelRequested, ToolEnded
from protoagent.events.types import Event
from protoagent.models.profile import PromptProfile
from protoagent.models.types import ActionMode, ModelRequest
from protoagent.skills.session_skills import preload_member
from protoagent.tools.base import ToolContext
from protoagent.workflow import roles
from protoagent.workflow.board import TaskBoard
from protoagent.workflow.facts import writes
from protoagent.workflow.localized import record_localized
from protoagent.workflow.named_files import NAMED_FILE_BUDGETS, TEST_MODULE_HEADER, render_named, unread_named_spans
from protoagent.workflow.packets import SPAN_BUDGETS, TESTER_SPAN_BUDGETS, paths_read, read_spans, render_spans
from protoagent.workflow.reports import (
    ADVICE_CHARS,
    FileChange,
    file_changes,
    recorded_report,
    render_advice,
    render_written,
    worker_messages,
)
from protoagent.workflow.signals import Reported, WorkerTurnLimit
from protoagent.workflow.task import WorkerReport
from protoagent.workflow.test_files import likely_test_module, test_files_note
from protoagent.workspace.confined import digest_regular

ENDED_AFTER_EDIT = "window_ended_after_edit"
"""Why a Coder assignment is done without a report: its last window ended right after an applied edit."""
DEFAULT_WINDOWS = 3


@dataclass(frozen=True, slots=True)
class WorkerOutcome:
    status: Literal["done", "needs_context", "blocked"]
    reason: str
    summary: str
    changed_files: tuple[str, ...] = ()
    windows: int = 1
    changes: tuple[FileChange, ...] = ()
    missing_paths: tuple[str, ...] = ()


def file_writes(events: Sequence[Event], agent: str | None = None, after_seq: int = 0) -> list[Event]:
    """Executed file changes (``tool.ended`` ok for a write tool), optionally for one agent."""
    return [e for e, _ in writes(events, agent, after_seq)]


def revision_current(root: Path, write: Event) -> bool:
    ended = write.fact(ToolEnded)
    data = ended.data if ended is not None else {}
    path, revision = data.get("path"), data.get("source_revision")
    if not path or not revision:
        return False
    target = root / str(path)
    try:
        return digest_regular(target) == str(revision)  # a FIFO in its place is not opened
    except OSError:
        return False


@dataclass(eq=False, slots=True)
class WorkerRunner:
    """Runs worker inferences inside the run's session, pipeline, approvals and budget."""

    session: AgentSession
    board: TaskBoard
    budget: Budget
    profile: PromptProfile
    mode: ActionMode
    max_windows: int = DEFAULT_WINDOWS
    members: Mapping[str, EffectiveAgent] = field(default_factory=dict)
    """The lead's team by name, compiled from the member definitions."""
    pending_yield: WorkerTurnLimit | None = field(default=None, init=False)
    """Set when the Architect's Coder assignment ran out of windows: its next request yields."""
    assignments: dict[str, int] = field(default_factory=dict, init=False)
    """Worker agent -> the log length when its current assignment started."""

    def yield_hook(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        """Before-model hook: the Architect yields after an exhausted progressing assignment; a
        worker that recorded its report gets no further request (its turn is over)."""
        if request.agent_role == ARCHITECT and self.pending_yield is not None:
            signal, self.pending_yield = self.pending_yield, None
            raise YieldControl(signal)
        start = self.assignments.get(request.agent_role)
        if start is not None and recorded_report(events, request.agent_role, start) is not None:
            raise YieldControl(Reported())
        return request

    def _assignment(self, role: str, task: str, preset: Preset) -> tuple[AgentLoop, str]:
        """Open a worker assignment: a fresh conversation (nothing carries over from the worker's
        earlier assignments) that starts from its packet. The task record reaches it through
        admission, once."""
        self.assignments[role] = start = len(self.session.log)
        self.session.log.append("worker.started", {"role": role, "task": task}, agent=role)
        assignment = f"Assignment: {task}"
        member = self.members.get(role)
        if member is not None:  # assignment is the one unconditional preload, for members too
            skills = self.session.services.skills
            preload_member(skills, self.session.log, role, member.skills, preset.tools, assignment)
        loop = AgentLoop(self.session, agent=role, role=preset, budget=self.budget, history_from=start)
        return loop, assignment

    def _packet(
        self,
        task: str,
        window_turns: int | None = None,
        advice: str | None = None,
        tester: bool = False,
        unread: bool = False,
    ) -> str | None:
        """What the assignment starts from besides its task: the source the Architect already
        read that the task names (current revisions only; Tester, who only reads, gets more of
        it), before it the advice its lead has not seen yet, for Tester the test modules the checks run and, for
        Coder, the size of its work window. What the worker is told (its task and that advice)
        decides which files and lines count as named."""
        events, root = self.session.log.events, self.session.root
        readers = (ARCHITECT, TESTER, EXPLORER)  # the lead and its read-only workers
        budget = (TESTER_SPAN_BUDGETS if tester else SPAN_BUDGETS)[self.profile]
        told = f"{task}\n{advice}" if advice else task
        spans, stale = read_spans(events, root, budget, agents=readers, assignment=told)
        parts = (
            [f"What the Tester wrote in this same turn of the Architect (advice, not evidence):\n{advice}"]
            if advice
            else []
        )
        parts.append(render_spans(spans, stale, editing=not tester))  # the cases first: source can be long
        if unread:  # the files it names that no one read: Coder would read them first
            named = unread_named_spans(
                root, told, paths_read(events, (*readers, CODER)), NAMED_FILE_BUDGETS[self.profile], shown=spans
            )
            record_localized(self.session.log, named, agent=CODER)
            parts.append(render_named(named))
        if tester:
            plan = self.session.services.checks
            likely = likely_test_module(plan, told)
            module = unread_named_spans(
                root,
                told,
                paths_read(events, readers),
                NAMED_FILE_BUDGETS[self.profile],
                paths=[likely] if likely else [],
            )
            record_localized(self.session.log, module, agent=TESTER)
            parts += [render_named(module, TEST_MODULE_HEADER), test_files_note(plan, told) or ""]
        if window_turns is not None:
            parts.append(
                f"This work window has {window_turns} model turns. Apply the edits first, then call report_task."
            )
        return "\n\n".join(p for p in parts if p) or None

    async def run_coder(self, task: str) -> WorkerOutcome:
        log = self.session.log
        advice = self._advice_the_lead_has_not_seen("tester")
        loop, assignment = self._assignment("coder", task, self._role("coder", roles.coder))
        self.board.new_inference()
        loop.start_turn(assignment, context=self._packet(task, loop.role.max_steps, advice, unread=True))
        outcome = await self._windows(loop)
        outcome = replace(outcome, changes=file_changes(log.events, "coder", self.assignments["coder"]))
        loop.end_turn(
            TurnOutcome("completed" if outcome.status == "done" else "limit", outcome.summary, loop.steps_taken)
        )
        if outcome.reason or (outcome.status == "done" and self._unresolved("coder")):
            # A normal later outcome (even plain text) resolves an earlier limit handoff.
            self.board.report(WorkerReport("coder", outcome.status, outcome.summary, reason=outcome.reason))
        if outcome.reason == "worker_turn_limit":
            self.pending_yield = WorkerTurnLimit()
        log.append(
            "worker.ended",
            {
                "role": "coder",
                "status": outcome.status,
                "reason": outcome.reason,
                "windows": outcome.windows,
                "changed_files": list(outcome.changed_files),
            },
            agent="coder",
        )
        return outcome

    def _advice_the_lead_has_not_seen(self, role: str) -> str | None:
        """What ``role`` wrote beside its report when it ran in the lead's current turn (no lead
        request since its assignment began), so a Coder called in the same turn as the Tester gets
        its cases (its report reaches the Coder in the task record); ``None`` once the lead has
        seen it (then the lead's own assignment carries what it kept) or when it wrote nothing more."""
        start = self.assignments.get(role)
        events = self.session.log.events
        if start is None or any(e.agent == ARCHITECT and e.fact(ModelRequested) is not None for e in events[start:]):
            return None
        report = recorded_report(events, role, start)
        said = [m for m in worker_messages(events, role, start) if report is None or m != report.summary.strip()]
        if not said:
            return None
        return render_written(said, ADVICE_CHARS[self.profile])

    def _unresolved(self, role: str) -> bool:
        return any(r.role == role for r in self.board.record.unresolved_reports)

    async def _windows(self, loop: AgentLoop) -> WorkerOutcome:
        log = self.session.log
        first_seq = len(log)
        for window in range(1, self.max_windows + 1):
            start = len(log)
            result = await loop.run_steps(loop.role.max_steps)
            events = log.events
            fresh = file_writes(events, "coder", start)
            changed = tuple(
                dict.fromkeys(str(ended.data.get("path")) for _, ended in writes(events, "coder", first_seq))
            )
            report = recorded_report(events, "coder", start)
            if report is not None:
                return WorkerOutcome(
                    report.status, "", report.summary, changed, window, missing_paths=report.missing_paths
                )
            if result.status == "completed":
                return WorkerOutcome("done", "", result.text, changed, window)
            if result.status in ("failed", "yielded"):
                return WorkerOutcome("blocked", "worker_failed", result.text, changed, window)
            if not fresh:
                return WorkerOutcome(
                    "blocked", "worker_no_progress", "a work window made no new edits", changed, window
                )
            if window < self.max_windows and all(revision_current(self.session.root, e) for e in fresh):
                log.append(
                    "worker.continuing",
                    {"role": "coder", "window": window + 1, "fresh_writes": len(fresh)},
                    agent="coder",
                )
                continue
            if _ended_on_applied_edit(events, start, self.session.root):
                summary = "the work window ended right after an applied edit; the edits landed"
                return WorkerOutcome("done", ENDED_AFTER_EDIT, summary, changed, window)
            return WorkerOutcome(
                "needs_context",
                "worker_turn_limit",
                "the assignment is unfinished after its last work window",
                changed,
                window,
            )
        raise AssertionError("unreachable: the last window returns")

    async def run_tester(self, task: str) -> str:
        log = self.session.log
        loop, assignment = self._assignment("tester", task, self._role("tester", roles.tester))
        outcome = await loop.run_turn(assignment, context=self._packet(task, tester=True))
        log.append("worker.ended", {"role": "tester", "status": outcome.status}, agent="tester")
        return self._advice("tester")

    def _advice(self, role: str) -> str:
        """What an advising worker concluded in its assignment: its messages and its report."""
        events, start = self.session.log.events, self.assignments[role]
        report = recorded_report(events, role, start)
        return render_advice(role, report, worker_messages(events, role, start), ADVICE_CHARS[self.profile])

    def _role(self, name: str, builtin: Callable[[PromptProfile, ActionMode], Preset]) -> Preset:
        """The built-in worker role with the prompt and tools its compiled config gives."""
        preset = builtin(self.profile, self.mode)
        member = self.members.get(name)
        if member is None:
            return preset
        prompt = roles.with_batching(name, member.prompt, self.profile, self.mode)
        return replace(preset, system_prompt=prompt, tools=member.tools)

    async def run_member(self, member: EffectiveAgent, task: str) -> str:
        """One generated delegate: the member's compiled prompt and tools, in this session."""
        log = self.session.log
        role = Preset(
            member.name, member.prompt, member.tools, max_steps=8, profile=self.profile, action_mode=self.mode
        )
        loop, assignment = self._assignment(member.name, task, role)
        outcome = await loop.run_turn(assignment)
        log.append("worker.ended", {"role": member.name, "status": outcome.status}, agent=member.name)
        return self._advice(member.name)


def _ended_on_applied_edit(events: Sequence[Event], after_seq: int, root: Path) -> bool:
    """The window's last Coder result is an applied write whose revision is still current."""
    for event in reversed(events):
        if event.seq <= after_seq:
            return False
        if event.agent == "coder" and event.fact(ToolEnded) is not None:
            return bool(file_writes([event], "coder")) and revision_current(root, event)
    return False


def runner_of(ctx: ToolContext) -> WorkerRunner:
    runner = ctx.services.workers
    if runner is None:
        raise ToolRejected("workers are not available in this session", kind="no_workers")
    return runner
