"""The ``run_check`` tool: run one repository check by id, exactly as it was captured before
inference, and return a receipt the workflow's evidence rules read.

The model names a check id and a phase; it never supplies argv, cwd or environment. ``prepare``
expands the id through the processes layer's command preparation, so the approver sees the
same exact preview as for ``execute_command``; the command then runs through the session's
process registry (its own process group and output journal).

``RunServices`` read: ``checks`` (the ``CheckPlan``), ``python`` (the selected interpreter),
``processes`` (the ``ProcessRegistry``; a tool-owned one is used without it), ``sandbox`` and
``changed_files`` (a callable listing the paths this run changed, for revision capture).
Around each run the workspace's tracked files are captured too (``checks.tracked``), so a check
that rewrites one (a build regenerating README.md) is reported by its receipt. Before each run the
check's runner files are compared with the revisions the session first saw (the ``check_runners``
service, else this tool's own record): a changed runner is named by ``changed_runner_files``,
unless the run changed that file through its own reviewed file edits.
"""

from __future__ import annotations

import asyncio
import errno
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from protoagent.checks.outcomes import Verdict, classify, without_terminal_codes
from protoagent.checks.receipts import (
    ChangedFiles,
    CheckReceipt,
    dependency_revisions,
    root_test_files,
    workspace_relative,
)
from protoagent.checks.tracked import RunnerRevisions, capture_tracked
from protoagent.checks.types import CheckPlan, CheckSpec
from protoagent.errors import ToolRejected
from protoagent.processes.command import NO_SANDBOX, CommandRequest, CommandSite, PreparedCommand, prepare_command
from protoagent.processes.live import LIVE_OUTPUT
from protoagent.processes.results import observe
from protoagent.processes.runner import ManagedProcess, ProcessRegistry, session_home
from protoagent.processes.sandbox import asks_each_command
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.tools.cancellation import attach_partial_output

DEFAULT_CHECK_TIMEOUT_S = 300.0
"""Seconds a check may run before its process group is stopped."""
CHECK_OUTPUT_LIMIT = 8192
"""Bytes of output the model sees (head and tail); the full output stays in the journal."""
MAX_CLASSIFIED_BYTES = 1 << 20
"""Bytes of output read back to classify a run (head and tail of larger journals)."""

Phase = Literal["baseline", "verify"]


class RunCheckInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    check_id: str
    phase: Phase = "verify"
    """baseline: before editing; verify: after the last change (the declared choices name both)."""


@dataclass(frozen=True, slots=True)
class _CheckCall:
    """What ``prepare`` hands to ``execute``: the check and either a command or why none runs."""

    plan: CheckPlan
    check: CheckSpec
    phase: Phase
    command: PreparedCommand | None = None
    unavailable: str | None = None
    error: str | None = None


class RunCheck(Tool[RunCheckInput]):
    name: ClassVar[str] = "run_check"
    description: ClassVar[str] = "Run a check by id."
    input_model: ClassVar[type[BaseModel]] = RunCheckInput
    metadata: ClassVar[ToolMetadata] = ToolMetadata(effect="execute", presentation="terminal")

    def __init__(self, *, timeout_s: float = DEFAULT_CHECK_TIMEOUT_S, output_limit: int = CHECK_OUTPUT_LIMIT) -> None:
        self.timeout_s = timeout_s
        self.output_limit = output_limit
        self._registry: ProcessRegistry | None = None
        self._runners = RunnerRevisions()

    def prepare(self, args: RunCheckInput, ctx: ToolContext) -> Prepared:
        plan = check_plan(ctx)
        check = plan.get(args.check_id)
        if check is None:
            raise _unknown_check(args.check_id, plan)
        if args.phase == "baseline" and check.id in plan.bootstrap_checks and not root_test_files(ctx.root):
            raise _empty_bootstrap_baseline(check.id, plan)
        if check.runner_unavailable is not None:
            return _nothing_runs(_CheckCall(plan, check, args.phase, unavailable=check.runner_unavailable))
        request = CommandRequest(check.argv, check.cwd, check.env, self.timeout_s, self.output_limit)
        try:
            command = prepare_command(request, self._site(ctx))
        except ToolRejected as rejection:
            # The command is frozen, so the model cannot correct it: report instead of rejecting.
            if rejection.kind == "unknown_executable":
                return _nothing_runs(_CheckCall(plan, check, args.phase, unavailable=rejection.message))
            return _nothing_runs(_CheckCall(plan, check, args.phase, error=rejection.message))
        preview = f"check: {check.id} ({args.phase}){f' - {check.reason}' if check.reason else ''}\n{command.preview()}"
        call = _CheckCall(plan, check, args.phase, command)
        # The session rule's identity is the check's command, so "for this session" covers the same
        # check (same argv, cwd and environment) in its next phase too.
        inside = not asks_each_command(command.sandbox)
        return Prepared(
            preview, "execute", inside_workspace=inside, state=call, action=f"check: {check.id}\n{command.preview()}"
        )

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        call: _CheckCall = prepared.state
        if call.command is None:
            return _not_run(call, ctx, call.unavailable, call.error)
        registry = self._process_registry(ctx)
        artifacts_dir = registry.artifacts_dir(ctx.artifacts_dir)
        tracked = await asyncio.to_thread(capture_tracked, ctx.root)
        runners = ctx.services.check_runners or self._runners
        changed_runner = _not_edited(ctx, await asyncio.to_thread(runners.changed, call.command.executable))
        try:
            process = registry.start(call.command, artifacts_dir=artifacts_dir, label=call.check.id, listed=False)
        except OSError as error:
            reason = f"could not start {call.command.executable!r}: {error.strerror or error}"
            if error.errno == errno.ENOENT:
                return _not_run(call, ctx, reason, None)
            return _not_run(call, ctx, None, reason)
        try:
            with LIVE_OUTPUT.watching(ctx.session_id, ctx.call_id, process.journal):
                await process.wait(None)
        except asyncio.CancelledError as cancelled:
            process.kill()
            seen = observe(process)  # the call's tool.ended keeps the output so far
            attach_partial_output(cancelled, replace(seen, data={**seen.data, "check_id": call.check.id}))
            raise
        finally:
            registry.forget(process.id)
        changed = await asyncio.to_thread(tracked.changed_since)
        return _finished(call, ctx, process, changed, changed_runner)

    def _site(self, ctx: ToolContext) -> CommandSite:
        artifacts_dir = self._process_registry(ctx).artifacts_dir(ctx.artifacts_dir)
        python = ctx.services.python or sys.executable
        sandbox = ctx.services.sandbox or NO_SANDBOX
        return CommandSite(ctx.root, session_home(artifacts_dir), str(python), sandbox)

    def _process_registry(self, ctx: ToolContext) -> ProcessRegistry:
        """The session's registry, or one this tool keeps when the wiring gives none."""
        registry = ctx.services.processes
        if registry is not None:
            return registry
        if self._registry is None:
            self._registry = ProcessRegistry()
        return self._registry


def check_plan(ctx: ToolContext) -> CheckPlan:
    """The session's check plan; a session without one has no checks."""
    plan = ctx.services.checks
    return CheckPlan() if plan is None else plan


def changed_files(ctx: ToolContext) -> ChangedFiles | None:
    """The ``changed_files`` service when the session offers one."""
    return ctx.services.changed_files


def _unknown_check(check_id: str, plan: CheckPlan) -> ToolRejected:
    available = list(plan.check_ids)
    hint = f"run one of: {', '.join(available)}" if available else "this run has no checks"
    return ToolRejected(
        f"unknown check id {check_id!r}; {hint}",
        kind="unknown_check_id",
        details={"available_check_ids": available},
    )


def _empty_bootstrap_baseline(check_id: str, plan: CheckPlan) -> ToolRejected:
    return ToolRejected(
        f"check {check_id!r} is the bootstrap runner for root test_*.py regressions and none exist yet, "
        "so a baseline would measure nothing. Inspect the source, make the change together with its root "
        "test_*.py regression tests, then run the check with phase='verify'",
        kind="empty_bootstrap_baseline",
        details={"bootstrap_checks": list(plan.bootstrap_checks), "test_pattern": "test_*.py"},
    )


def _nothing_runs(call: _CheckCall) -> Prepared:
    why = call.unavailable or call.error
    return Prepared(f"check: {call.check.id} ({call.phase}) cannot run: {why}\nnothing will run", "none", state=call)


def _not_run(call: _CheckCall, ctx: ToolContext, unavailable: str | None, error: str | None) -> ToolOutput:
    """The receipt of a check that did not start: ``unavailable`` (a missing runner) or ``error``."""
    command = call.command
    receipt = CheckReceipt(
        check_id=call.check.id,
        phase=call.phase,
        outcome="unavailable" if unavailable is not None else "error",
        exit_code=None,
        tests_run=None,
        dependency_revisions=dependency_revisions(ctx.root, call.check, call.plan, changed_files(ctx)),
        argv=command.argv if command is not None else call.check.argv,
        cwd=str(command.cwd if command is not None else ctx.root / call.check.cwd),
        duration_s=0.0,
        artifact=None,
        unavailable_reason=unavailable,
    )
    return receipt.to_output(note=error or "nothing ran")


def _finished(
    call: _CheckCall,
    ctx: ToolContext,
    process: ManagedProcess,
    changed_tracked: tuple[str, ...] = (),
    changed_runner: tuple[str, ...] = (),
) -> ToolOutput:
    command = process.command
    state = process.state()
    verdict = _classify(command, process, state.exit_code, state.timed_out, state.terminated, ctx.root)
    observation = process.journal.consume(command.output_limit, settled=True)
    receipt = CheckReceipt(
        check_id=call.check.id,
        phase=call.phase,
        outcome=verdict.outcome,
        exit_code=state.exit_code,
        tests_run=verdict.tests_run,
        dependency_revisions=dependency_revisions(ctx.root, call.check, call.plan, changed_files(ctx)),
        argv=command.argv,
        cwd=str(command.cwd),
        duration_s=state.duration_s,
        artifact=str(process.journal.path),
        unavailable_reason=verdict.unavailable_reason,
        failed_tests=verdict.failed_tests,
        changed_tracked_files=changed_tracked,
        changed_runner_files=changed_runner,
    )
    shown_output = without_terminal_codes(observation.text)
    if not changed_runner:
        return receipt.to_output(shown_output, verdict.note)
    shown = ", ".join(_shown_path(ctx.root, path) for path in changed_runner)
    runner_note = f"the check's runner changed during this session ({shown}): this run is not verification evidence"
    return receipt.to_output(shown_output, "; ".join(filter(None, (verdict.note, runner_note))))


def _not_edited(ctx: ToolContext, changed: tuple[str, ...]) -> tuple[str, ...]:
    """``changed`` less the files this run changed through its file edits: a runner script the
    task edited is a reviewed change, not a replaced runner (a command overwriting the edit
    leaves the edit's revision stale, which the evidence reports)."""
    service = changed_files(ctx)
    if not changed or service is None:
        return changed
    relative = (workspace_relative(ctx.root, path) for path in service())
    edited = {os.path.normpath(ctx.root / rel) for rel in relative if rel is not None}
    return tuple(path for path in changed if path not in edited)


def _shown_path(root: Path, path: str) -> str:
    return os.path.relpath(path, root) if Path(path).is_relative_to(root) else path


def _classify(
    command: PreparedCommand, process: ManagedProcess, code: int | None, timed_out: bool, terminated: bool, root: Path
) -> Verdict:
    output = process.journal.read_text(MAX_CLASSIFIED_BYTES)
    runs_pytest = any(os.path.basename(arg) in ("pytest", "py.test") for arg in command.argv)
    bases = (str(root), str(command.cwd))
    return classify(code, output, timed_out=timed_out, terminated=terminated, bases=bases, pytest=runs_pytest)


def read_output(path: Path, limit: int = MAX_CLASSIFIED_BYTES) -> str:
    """The journal's text for classification: whole, or its head and tail when over ``limit``."""
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size <= limit:
            data = handle.read()
        else:
            head = handle.read(limit // 2)
            handle.seek(size - limit // 2)
            data = head + b"\n" + handle.read()
    return data.decode("utf-8", errors="replace")


CHECK_TOOLS: tuple[type[Tool[Any]], ...] = (RunCheck,)
"""The check tool classes; the session instantiates them."""
