"""Scratch checks stay real and get fast: a failing pytest check runs its baseline's failing tests
first (the whole check only for a candidate that passes them), in children of one fork server
that import the candidate fresh; every scratch process is a command of the session's process
registry, which Stop and Ctrl-C clear; the repair's approval goes through the pipeline."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from protoagent.checks.types import CheckSpec
from protoagent.events import MemoryStore
from protoagent.processes.groups import group_alive
from protoagent.processes.runner import ProcessRegistry
from protoagent.processes.sandbox import select_sandbox
from protoagent.repair.candidates import REPAIR_AGENT
from protoagent.repair.pytest_args import failing_ids, narrowed
from protoagent.repair.scratch import ScratchOptions, ScratchWorkspace
from protoagent.testing import ScriptedModel
from protoagent.tools.approvals import ApprovalAnswer, ApprovalRequest, rules_from_events
from protoagent.workflow.run import RunOptions, run_task

from .support import DATE_REPO, DATES, FIXED_LINE, OLD_LINE, PRICES, PRICES_REPO, PRICES_TEST, repo

PYTEST = CheckSpec(
    "pytest",
    (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
    env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
)
"""Without the plugins installed beside the harness's own pytest, so the tests measure the mechanism."""
HALF = """

def half(price):
    return price / 2
"""
HALF_TEST = """from prices import half


def test_half():
    assert half(10) == 5
"""
SLOW_TEST = """import time
from pathlib import Path

from prices import with_tax


def test_slow():
    Path("started").write_text("yes")
    time.sleep(60)
    assert with_tax(1, 0) == 1
"""
STOP_WITHIN_S = 1.5
DATE_BUG = "    return int(year), int(day), int(month)"
DATE_FIX = "    return int(year), int(month), int(day)"


def baseline_output(root: Path) -> str:
    """What the check prints at baseline (a real run of ``PYTEST`` in the repository)."""
    env = {**os.environ, **PYTEST.env}
    return subprocess.run(PYTEST.argv, cwd=root, env=env, capture_output=True, text=True, check=False).stdout


def workspace(
    tmp_path: Path, files: dict[str, str], registry: ProcessRegistry, *, baseline: bool = True
) -> ScratchWorkspace:
    root = repo(tmp_path, files)
    options = ScratchOptions(failing={"pytest": baseline_output(root)} if baseline else {})
    return ScratchWorkspace(root, sys.executable, select_sandbox("auto"), processes=registry, options=options)


def test_a_candidate_runs_the_failing_tests_first_and_the_whole_check_only_once_they_pass(tmp_path: Path) -> None:
    files = {"prices.py": PRICES + HALF, "test_prices.py": PRICES_TEST, "test_half.py": HALF_TEST}
    with workspace(tmp_path, files, ProcessRegistry()) as scratch:
        unfixed = asyncio.run(scratch.run(PYTEST, 60))
        scratch.write("prices.py", (PRICES + HALF).replace(OLD_LINE, FIXED_LINE).replace("/ 2", "/ 3"))
        breaks_another = asyncio.run(scratch.run(PYTEST, 60))
        scratch.write("prices.py", "def with_tax(:\n")
        broken = asyncio.run(scratch.run(PYTEST, 60))
        scratch.write("prices.py", (PRICES + HALF).replace(OLD_LINE, FIXED_LINE))
        fixed = asyncio.run(scratch.run(PYTEST, 60))
    # The unfixed copy ran only the failing test: the passing one never ran.
    assert (unfixed.passed, unfixed.outcome, unfixed.narrowed, unfixed.forked) == (False, "failed", True, True)
    assert "1 failed" in unfixed.output and "test_half" not in unfixed.output
    # Fixing the failing test is not enough: the whole check ran and caught the other test.
    assert (breaks_another.passed, breaks_another.narrowed) == (False, False)
    assert "FAILED test_half.py::test_half" in breaks_another.output and "1 passed" in breaks_another.output
    assert (broken.passed, broken.narrowed) == (False, True) and "SyntaxError" in broken.output
    # Each child imported the candidate's file fresh from disk, as a new process would.
    assert (fixed.passed, fixed.outcome, fixed.narrowed, fixed.forked) == (True, "passed", False, True)
    assert "2 passed" in fixed.output


def test_failing_ids_that_select_no_test_fall_back_to_the_whole_check(tmp_path: Path) -> None:
    root = repo(tmp_path, PRICES_REPO)
    stale = {"pytest": "FAILED test_prices.py::test_renamed_since - assert 1 == 2\n"}
    options = ScratchOptions(failing=stale)
    with ScratchWorkspace(root, sys.executable, processes=ProcessRegistry(), options=options) as scratch:
        first = asyncio.run(scratch.run(PYTEST, 60))
    assert (first.passed, first.outcome, first.narrowed) == (False, "failed", False)
    assert "FAILED test_prices.py::test_with_tax_adds_the_rate" in first.output


def _appears(path: Path, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return path.exists()


async def _stopped(scratch: ScratchWorkspace, check: CheckSpec, stop: str) -> tuple[float, list[int]]:
    """Start ``check``, wait until its test sleeps, then Stop (registry shutdown) or Ctrl-C (cancel)."""
    run = asyncio.ensure_future(scratch.run(check, 60))
    marker = scratch.root / "started"
    assert await asyncio.to_thread(_appears, marker, 30), "the slow test never started"
    groups = [p.pid for p in scratch.processes.live()]
    started = time.monotonic()
    if stop == "cancel":
        run.cancel()
    else:
        await asyncio.to_thread(scratch.processes.shutdown)
    try:
        result = await run
        assert not result.passed
    except asyncio.CancelledError:
        assert stop == "cancel"
    return time.monotonic() - started, groups


def test_ctrl_c_and_stop_end_a_scratch_check_and_every_process_it_started_within_1_5_s(tmp_path: Path) -> None:
    files = {**PRICES_REPO, "test_slow.py": SLOW_TEST}
    unittest = CheckSpec("unittest", (sys.executable, "-c", "import test_slow; test_slow.test_slow()"))
    for stop, check in (("cancel", PYTEST), ("shutdown", unittest)):
        registry = ProcessRegistry(grace_s=0.5)
        with workspace(tmp_path / stop, files, registry, baseline=False) as scratch:
            seconds, groups = asyncio.run(_stopped(scratch, check, stop))
            assert groups, "the scratch check was not a command of the session's registry"
            assert seconds < STOP_WITHIN_S, f"{stop}: {seconds:.2f} s"
            assert not any(group_alive(pid) for pid in groups)
            assert registry.live() == []


def test_the_repairs_approval_goes_through_the_pipeline_with_real_paths_and_a_session_rule(tmp_path: Path) -> None:
    root = repo(tmp_path, DATE_REPO, git=True)
    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer.for_session() if request.agent == REPAIR_AGENT else ApprovalAnswer.once()

    store = MemoryStore()
    fix = {"role": REPAIR_AGENT, "text": json.dumps({"path": "dates.py", "old": DATE_BUG, "new": DATE_FIX})}
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=store,
        approval="ask",
        answerer=approve,
        surface="editing",
        provider=ScriptedModel.from_lines([fix]),
        profile="small",
        tester=False,
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    report = asyncio.run(run_task("fix the failing date parser test", options))
    events = store.load(report.session_id)
    repair = [e for e in events if e.agent == REPAIR_AGENT and e.type.startswith("approval.")]
    assert [e.type for e in repair] == ["approval.requested", "approval.decided", "approval.rule_added"]
    requested, decided, added = (e.payload for e in repair)
    assert requested["paths"] == ["dates.py"] and requested["preview"].startswith("guided repair:")
    assert decided["decision"] == "allow" and decided["rule"] == added["rule"]
    assert [r.paths for r in rules_from_events(events)] == [("dates.py",)]
    assert [r.paths for r in asked if r.agent == REPAIR_AGENT] == [("dates.py",)]
    # The repair's approval is not a tool call, and the passing candidate is Coder's edit_file.
    assert not [e for e in events if e.type == "tool.started" and e.payload["call_id"] == requested["call_id"]]
    edits = [e for e in events if e.type == "tool.ended" and e.payload["tool"] == "edit_file"]
    assert [(e.agent, e.payload["status"]) for e in edits] == [("coder", "ok")]
    assert (root / "dates.py").read_text() == DATES.replace(DATE_BUG, DATE_FIX)
    assert report.evidence.verified


def test_a_candidate_past_its_time_limit_times_out_and_the_next_gets_a_fresh_fork_server(tmp_path: Path) -> None:
    registry = ProcessRegistry(grace_s=0.5)
    with workspace(tmp_path, {**PRICES_REPO, "test_slow.py": SLOW_TEST}, registry, baseline=False) as scratch:
        slow = asyncio.run(scratch.run(PYTEST, 1.0))
        left_running = registry.live()
        scratch.write("test_slow.py", "def test_slow():\n    assert True\n")
        scratch.write("prices.py", PRICES.replace(OLD_LINE, FIXED_LINE))
        after = asyncio.run(scratch.run(PYTEST, 60))
    assert (slow.passed, slow.outcome, slow.forked) == (False, "timed_out", True)
    assert left_running == [], "the timed-out candidate's server and child must be stopped"
    assert (after.passed, after.forked) == (True, True) and "2 passed" in after.output


def test_narrowing_replaces_only_the_checks_test_paths_and_never_widens_past_them(tmp_path: Path) -> None:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "test_b.py").write_text("")
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    python = (sys.executable, "-m", "pytest")
    argv = (*python, "-q", "-c", "pytest.ini", "-k", "tests", "tests")
    inside, outside = "tests/test_a.py::test_x[1 - 2]", "other/test_b.py::test_y"
    assert narrowed(argv, tmp_path, [inside]) == (*python, "-q", "-c", "pytest.ini", "-k", "tests", inside)
    assert narrowed(argv, tmp_path, [inside, outside]) is None
    assert narrowed((*python, "-q"), tmp_path, [outside]) == (*python, "-q", outside)
    assert narrowed(("pytest", "-q"), tmp_path, [inside]) is None
    output = f"FAILED {inside} - assert 1 == 2\nSUBFAILED[sub] {outside} - boom\nFAILED gone.py::t - x\n"
    assert failing_ids(output, tmp_path) == (inside, outside)
