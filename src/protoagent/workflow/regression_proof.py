"""Regression proof: the run's new tests fail on the unfixed source and pass on the fixed one.

A bug fix whose existing tests already passed before the change has no test the change turned
from failing to passing, so no check supports its objective and the lead would get a closing
request. The evidence a careful engineer would want is measurable without a model: run the same
frozen check on a scratch copy of the workspace (``repair.scratch``, inside the run's sandbox and
through the session's process registry) where every source file the run changed is as it was
before the run and every test file is as the run left it. A test in a file the run changed that
fails there, and that the final verify ran and passed, is a test the change turned from failing
to passing: ``workflow.criteria`` counts it like a fixed test of its check.

It runs after passing final checks when some criterion is still unsupported (a closing request
would be due), or after final checks whose only failures also failed at baseline (the proof then
shows the change made progress, ``workflow.evidence``, so those older failures are outside the
task); and only when the objective asks for a fix, the run changed test code and other code and
a selected check is a Python one (pytest or unittest); else no copy is made. The
scratch run needs approval like a check run (the session's policy, its rules and person); where
a person would have to be asked and nobody is there, it is skipped. Each check's proof is one
``check.regression_proof`` event; a proof that did not prove anything changes nothing.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from protoagent.agents.session import AgentSession
from protoagent.checks.failures import failed_tests
from protoagent.checks.python_suites import is_test_code
from protoagent.checks.run_check import DEFAULT_CHECK_TIMEOUT_S, RunCheck
from protoagent.checks.types import CheckSpec
from protoagent.events.catalog import RegressionProof
from protoagent.events.queries import facts, starts_run
from protoagent.events.types import Event
from protoagent.processes.command import NO_SANDBOX, CommandSandbox
from protoagent.processes.sandbox import asks_each_command
from protoagent.repair.scratch import ScratchOptions, ScratchRun, ScratchWorkspace
from protoagent.tools.approvals import ApprovalRequest
from protoagent.workflow.changes import FileChange, session_changes
from protoagent.workflow.evidence import CheckResult, seeks_fix
from protoagent.workflow.phase_control import run_start
from protoagent.workflow.task import TaskRecord
from protoagent.workflow.workers import file_writes

PROOF_EVENT = "check.regression_proof"
PROOF_AGENT = "verifier"
"""The proof is the harness's own check run, like the Graph's final checks."""


async def prove_regression(session: AgentSession, record: TaskRecord, passed: Sequence[CheckResult]) -> None:
    """Run the proof for each given selected Python check when the run qualifies (see the
    module docstring); ``passed`` are the final receipts: those that closed verification, or
    those whose only failures predate the change."""
    events = session.log.events
    plan = session.services.checks
    if plan is None or session.services.processes is None or not seeks_fix(record.objective) or _proved_yet(events):
        return
    turn = sum(1 for e in events if starts_run(e))
    changes = session_changes(events, turn)
    sources = [c for c in changes if not is_test_code(c.path)]
    tests = [c.path for c in changes if is_test_code(c.path)]
    final = {r.id: r for r in passed}
    checks = [c for c in (plan.get(i) for i in final) if c is not None and _python_check(c)]
    if not sources or not tests or not checks:
        return
    if any(not c.recorded for c in sources):
        for check in checks:
            _record(session, check.id, "skipped", note="a changed source file is too large to restore from the log")
        return
    for check in checks:
        refused = await _approve(session, check, [c.path for c in sources])
        if refused is not None:
            _record(session, check.id, "skipped", note=f"not approved: {refused}")
            continue
        await _prove(session, check, sources, tests, final[check.id])


async def _prove(
    session: AgentSession, check: CheckSpec, sources: Sequence[FileChange], tests: Sequence[str], final: CheckResult
) -> None:
    services = session.services
    sandbox: CommandSandbox = services.sandbox or NO_SANDBOX
    python = services.python or "python3"
    restored = [c.path for c in sources]
    assert services.processes is not None  # checked by the caller
    try:
        with ScratchWorkspace(
            session.root, python, sandbox, processes=services.processes, options=ScratchOptions(fork=False)
        ) as scratch:
            for change in sources:
                _restore(scratch.root, change)
            run = await scratch.run(check, _timeout_s(session))
    except (OSError, ValueError) as error:
        _record(session, check.id, "error", restored=restored, note=f"the scratch copy failed: {error}")
        return
    _record_run(session, check, run, tests, final, restored)


def _record_run(
    session: AgentSession,
    check: CheckSpec,
    run: ScratchRun,
    tests: Sequence[str],
    final: CheckResult,
    restored: list[str],
) -> None:
    if run.outcome not in ("passed", "failed"):
        _record(session, check.id, "error", restored=restored, note=f"the check ended {run.outcome} on the copy")
        return
    failing = list(failed_tests(run.output))
    proven = [t for t in failing if t not in final.failed_tests and _in_files(t, tests, check.cwd)]
    if proven:
        note = "the run's tests fail on the unfixed source and pass on the fixed one"
        _record(session, check.id, "proved", proven, failing, restored, note)
    elif run.passed:
        _record(session, check.id, "not_proved", [], failing, restored, "every test passes on the unfixed source too")
    else:
        note = "no failing test on the unfixed source is in a test file this run changed"
        _record(session, check.id, "not_proved", [], failing, restored, note)


def _proved_yet(events: Sequence[Event]) -> bool:
    """A proof was already recorded after the run's last change (it would measure the same)."""
    start = run_start(events)
    last_write = max((w.seq for w in file_writes(events, after_seq=start)), default=start)
    return any(True for _ in facts(events, RegressionProof, after=last_write))


def _python_check(check: CheckSpec) -> bool:
    """A pytest or unittest run: the runners whose failing test ids the receipts name per file."""
    argv = check.argv
    if check.runner_unavailable is not None or not argv:
        return False
    if any(os.path.basename(arg) in ("pytest", "py.test") for arg in argv[:1]):
        return True
    return len(argv) >= 3 and argv[1] == "-m" and argv[2] in ("pytest", "unittest")


async def _approve(session: AgentSession, check: CheckSpec, paths: Sequence[str]) -> str | None:
    """Approval for the scratch run, through the session's pipeline (its policy, its session
    rules, its person) with the same events as a call's approval; ``None`` when approved. A
    session rule for the check covers it; where a person would have to be asked and nobody is
    there, nothing is asked and the proof is skipped."""
    sandbox = session.services.sandbox or NO_SANDBOX
    confined = not asks_each_command(sandbox)
    approvals = session.pipeline.approvals
    rule = next(
        (r.command for r in approvals.rules if r.tool == "run_check" and r.command.startswith(f"check: {check.id}\n")),
        "",
    )
    automatic = approvals.policy == "auto" and confined
    if approvals.answerer is None and not automatic and not (rule and confined):
        return "a person would have to approve it and nobody is there to ask"
    request = ApprovalRequest(
        call_id=f"proof-{session.log.session_id}-{len(session.log.events)}",
        tool="run_check",
        effect="execute",
        preview=(
            f"regression proof: run check {check.id} ({' '.join(check.argv)}) once more in a scratch copy of the "
            f"workspace with this run's changes to {', '.join(paths)} undone and its test changes kept"
        ),
        paths=(),
        inside_workspace=confined,
        agent=PROOF_AGENT,
        action=rule,
    )
    return await session.pipeline.approve(request)


def _restore(root: Path, change: FileChange) -> None:
    """Put one source file of the copy back as it was before the run (removed if the run created it)."""
    target = root / change.path
    if not target.parent.resolve().is_relative_to(root.resolve()) or target.is_symlink():
        raise ValueError(f"{change.path!r} is not a file of the scratch copy")
    if change.before is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(change.before, encoding="utf-8")


def _in_files(test_id: str, files: Sequence[str], cwd: str) -> bool:
    """Whether ``test_id`` names a test in one of ``files`` (workspace-relative): a pytest id by
    its path (relative to the check's ``cwd``), a unittest id ``pkg.module.Class.test`` by a
    dotted module prefix that ends the file's dotted path."""
    if "::" in test_id or test_id.endswith(".py"):
        path = os.path.normpath(os.path.join(cwd, test_id.split("::", 1)[0].split(" ", 1)[0]))
        return path in {os.path.normpath(f) for f in files}
    parts = test_id.split(" ", 1)[0].split(".")
    modules = {".".join(Path(f).with_suffix("").parts) for f in files if f.endswith(".py")}
    for end in range(1, len(parts)):
        prefix = ".".join(parts[:end])
        if any(m == prefix or m.endswith(f".{prefix}") for m in modules):
            return True
    return False


def _timeout_s(session: AgentSession) -> float:
    """The check's own timeout: the session's ``run_check`` tool's."""
    tool = session.pipeline.registry.get("run_check")
    return tool.timeout_s if isinstance(tool, RunCheck) else DEFAULT_CHECK_TIMEOUT_S


def _record(
    session: AgentSession,
    check_id: str,
    outcome: str,
    proven: Sequence[str] = (),
    failing: Sequence[str] = (),
    restored: Sequence[str] = (),
    note: str = "",
) -> None:
    payload = RegressionProof(
        check_id=check_id,
        outcome=outcome,
        proven_tests=list(proven),
        failed_tests=list(failing),
        restored=list(restored),
        note=note,
    )
    session.log.append(PROOF_EVENT, payload.model_dump(), agent=PROOF_AGENT)
