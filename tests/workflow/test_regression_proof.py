"""A fix whose existing tests already passed before the change is proved by its own new tests: the
selected check runs once more on a scratch copy with the run's source changes undone and its test
changes kept, and a new test that fails there (and passed in the final verify) supports the
objective like a test the change turned from failing to passing. Without such a test, or for an
objective that asks for no fix, the lead's closing request goes out as before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from protoagent.events.catalog import undeclared_fields
from protoagent.tools.approvals import ApprovalAnswer, ApprovalRequest

from .support import BUGGY, BUGGY_LINE, FIXED_LINE, Run, call, run_workflow, sha

OLD_TESTS = """import unittest

from dates import parse_date


class ParseDateTest(unittest.TestCase):
    def test_same_month_and_day(self):
        self.assertEqual(parse_date("2024-03-03"), (2024, 3, 3))
"""
OLD_LAST = '        self.assertEqual(parse_date("2024-03-03"), (2024, 3, 3))\n'
REPO = {"dates.py": BUGGY, "test_dates.py": OLD_TESTS}
"""The bug is there, and the one existing test passes on it (the baseline passes)."""
FIX = "parse_date swaps the month and the day; fix it and add a test that pins the order"
NEW_TEST = "test_dates.ParseDateTest.test_month_before_day"
VERIFY: dict[str, Any] = {"name": "run_check", "arguments": {"check_id": "unittest", "phase": "verify"}}


def _added_test(date: str, expected: str) -> str:
    return f"\n    def test_month_before_day(self):\n        self.assertEqual(parse_date({date!r}), {expected})\n"


def _fix_with_test(date: str, expected: str, *, fix: bool = True) -> list[dict[str, Any]]:
    source = call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY))
    test = OLD_LAST + _added_test(date, expected)
    return [
        call("coder", "architect", task="fix the swapped return in dates.py and add a test"),
        *([source] if fix else []),
        call("edit_file", "coder", path="test_dates.py", old=OLD_LAST, new=test, expected_revision=sha(OLD_TESTS)),
        call("report_task", "coder", status="done", summary="fixed and tested"),
        {"role": "architect", "tool_calls": [VERIFY]},
    ]


def _review() -> dict[str, Any]:
    return call("review_criteria", "architect", met=[1], note="the diff swaps the return back")


def _proofs(run: Any) -> list[dict[str, Any]]:
    return [e.payload for e in run.of("check.regression_proof")]


def _phases(run: Any) -> list[str]:
    return [e.payload["phase"] for e in run.of("workflow.phase")]


def test_a_new_test_that_fails_on_the_unfixed_source_proves_the_fix_and_no_closing_request_goes_out(
    tmp_path: Path,
) -> None:
    run = run_workflow(tmp_path, FIX, _fix_with_test("2024-03-15", "(2024, 3, 15)"), files=REPO)
    assert [c.outcome for c in run.report.evidence.checks if c.phase == "baseline"] == ["passed"]
    [proof] = _proofs(run)
    assert proof["check_id"] == "unittest" and proof["outcome"] == "proved"
    assert proof["proven_tests"] == [NEW_TEST] and proof["restored"] == ["dates.py"]
    [event] = run.of("check.regression_proof")
    assert undeclared_fields(event.type, event.payload) == [] and event.agent == "verifier"
    # Approved before it ran, through the session's approvals (here: --approval auto in a sandbox).
    asked = [e for e in run.of("approval.requested") if e.payload["call_id"].startswith("proof-")]
    decided = [e for e in run.of("approval.decided") if e.payload["call_id"].startswith("proof-")]
    assert len(asked) == 1 and "scratch copy" in asked[0].payload["preview"]
    assert [d.payload["decision"] for d in decided] == ["allow"] and decided[0].seq < event.seq
    assert len(run.requests("architect")) == 2 and run.model.remaining == 0  # no closing request
    assert "review" not in _phases(run)
    assert run.json["criteria"] == [{"text": FIX, "support": "check", "evidence": [NEW_TEST]}]
    assert run.json["status"] == "completed" and run.json["verified"] is True
    # The proof ran on a scratch copy: the workspace keeps the fix and the new test.
    assert FIXED_LINE in (run.root / "dates.py").read_text()
    assert "test_month_before_day" in (run.root / "test_dates.py").read_text()


def test_a_new_test_that_passes_on_the_unfixed_source_proves_nothing_and_the_closing_request_goes_out(
    tmp_path: Path,
) -> None:
    turns = [*_fix_with_test("2024-05-05", "(2024, 5, 5)"), _review()]
    run = run_workflow(tmp_path, FIX, turns, files=REPO)
    [proof] = _proofs(run)
    assert proof["outcome"] == "not_proved" and proof["proven_tests"] == []
    assert len(run.requests("architect")) == 3 and run.model.remaining == 0
    assert _phases(run).count("review") == 1
    assert run.json["criteria"][0]["support"] == "review"


def test_an_objective_that_asks_for_no_fix_runs_no_proof(tmp_path: Path) -> None:
    objective = "add a test that parse_date pins the order of month and day, and make dates.py agree"
    turns = [*_fix_with_test("2024-03-15", "(2024, 3, 15)"), _review()]
    run = run_workflow(tmp_path, objective, turns, files=REPO)
    assert _proofs(run) == []
    assert len(run.requests("architect")) == 3 and run.model.remaining == 0
    assert _phases(run).count("review") == 1


def _run_asking(
    tmp_path: Path, turns: list[dict[str, Any]], answer: Callable[[ApprovalRequest], ApprovalAnswer]
) -> tuple[Run, list[ApprovalRequest]]:
    """One run under ``--approval ask`` with a person who answers every request with ``answer``."""
    asked: list[ApprovalRequest] = []

    async def person(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return answer(request)

    return run_workflow(tmp_path, FIX, turns, files=REPO, approval="ask", answerer=person), asked


def test_a_session_approval_of_the_check_covers_its_proof_and_the_person_is_not_asked_again(tmp_path: Path) -> None:
    run, asked = _run_asking(
        tmp_path, _fix_with_test("2024-03-15", "(2024, 3, 15)"), lambda r: ApprovalAnswer.for_session()
    )
    assert any(r.tool == "run_check" for r in asked)  # the person approved the check for the session
    assert not any(r.call_id.startswith("proof-") for r in asked)
    [proof] = _proofs(run)
    assert proof["outcome"] == "proved" and len(run.requests("architect")) == 2


def test_a_proof_the_person_denies_never_runs_and_the_closing_request_goes_out(tmp_path: Path) -> None:
    def answer(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer.deny("not now") if request.call_id.startswith("proof-") else ApprovalAnswer.once()

    run, asked = _run_asking(tmp_path, [*_fix_with_test("2024-03-15", "(2024, 3, 15)"), _review()], answer)
    assert [r.agent for r in asked if r.call_id.startswith("proof-")] == ["verifier"]  # asked once, denied
    [proof] = _proofs(run)
    assert proof["outcome"] == "skipped" and proof["failed_tests"] == [] and "not now" in proof["note"]
    assert len(run.requests("architect")) == 3 and run.model.remaining == 0
    assert run.json["criteria"][0]["support"] == "review"


def test_a_root_tests_py_module_is_test_code_so_its_new_test_proves_the_fix(tmp_path: Path) -> None:
    files = {"dates.py": BUGGY, "tests.py": OLD_TESTS}
    test = OLD_LAST + _added_test("2024-03-15", "(2024, 3, 15)")
    fix = call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY))
    turns = [
        call("coder", "architect", task="fix the swapped return in dates.py and add a test to tests.py"),
        fix,
        call("edit_file", "coder", path="tests.py", old=OLD_LAST, new=test, expected_revision=sha(OLD_TESTS)),
        call("report_task", "coder", status="done", summary="fixed and tested"),
        {"role": "architect", "tool_calls": [VERIFY]},
    ]
    run = run_workflow(tmp_path, FIX, turns, files=files)
    [proof] = _proofs(run)
    assert proof["outcome"] == "proved" and proof["restored"] == ["dates.py"]
    assert proof["proven_tests"] == ["tests.ParseDateTest.test_month_before_day"]
    assert "review" not in _phases(run) and run.json["criteria"][0]["support"] == "check"


OTHER_FAILURE = "\n    def test_needs_a_tool_this_machine_lacks(self):\n        self.fail('no such program')\n"


def test_a_proof_shows_progress_so_failures_older_than_the_change_get_no_repair(tmp_path: Path) -> None:
    # An assertion added to an existing test adds no test to count: only the proof shows progress.
    files = {"dates.py": BUGGY, "test_dates.py": OLD_TESTS + OTHER_FAILURE}
    extended = OLD_LAST + '        self.assertEqual(parse_date("2024-03-15"), (2024, 3, 15))\n'
    fix = call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY))
    turns = [
        call("coder", "architect", task="fix the swapped return in dates.py and pin it in test_same_month_and_day"),
        fix,
        call(
            "edit_file",
            "coder",
            path="test_dates.py",
            old=OLD_LAST,
            new=extended,
            expected_revision=sha(OLD_TESTS + OTHER_FAILURE),
        ),
        call("report_task", "coder", status="done", summary="fixed and pinned"),
        {"role": "architect", "tool_calls": [VERIFY]},
    ]
    run = run_workflow(tmp_path, FIX, turns, files=files)
    [proof] = _proofs(run)
    assert proof["outcome"] == "proved"
    assert proof["proven_tests"] == ["test_dates.ParseDateTest.test_same_month_and_day"]
    assert "repair" not in _phases(run) and run.model.remaining == 0  # no repair request for the old failure
    # Still no verification: a check that fails verifies nothing, and the report says why.
    assert run.json["verified"] is False and run.json["status"] == "incomplete"
    assert any("failed before the change too (at baseline) and are outside this task" in n for n in run.json["notes"])
    [final] = [c for c in run.json["checks"] if c["phase"] == "verify"]
    assert final["preexisting_failures"] == ["test_dates.ParseDateTest.test_needs_a_tool_this_machine_lacks"]
