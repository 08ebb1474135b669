"""What the lead and its workers are told is what the run does: a failing check's excerpt keeps
the tracebacks, the Architect knows its workers run no commands and how the run ends, a worker
never hears of the lead's frozen plan, the Coder is not told to re-read lines its assignment
shows, and code_context's "more results" advice never repeats what the call already did."""

from __future__ import annotations

import functools
from pathlib import Path

from protoagent.checks.receipts import receipt_excerpt, split_receipt
from protoagent.excerpts import original_length
from protoagent.models.types import ModelRequest
from protoagent.workflow import roles

from .support import BUGGY, BUGGY_LINE, FIXED_LINE, call, fix_turns, run_workflow, say, sha

OBJECTIVE = "fix the failing date parser test"
run = functools.partial(run_workflow, profile="standard")

NOISY_TESTS = """import warnings

import pytest

from dates import parse_date


@pytest.mark.parametrize("n", range(40))
def test_old_api_still_parses(n):
    warnings.warn(DeprecationWarning(f"old api {n} is deprecated and will be removed in a future release"))


def test_parses_year_month_day():
    assert parse_date("2024-03-15") == (2024, 3, 15)


def test_parses_another_date():
    assert parse_date("2023-01-02") == (2023, 1, 2), "month and day swapped for the second example"
"""


def _contents(request: ModelRequest) -> str:
    return "\n".join(str(m.content) for m in request.messages)


def test_a_failing_pytest_baseline_shown_to_the_architect_keeps_its_first_failure_and_summary_and_cuts_warnings(
    tmp_path: Path,
) -> None:
    files = {"dates.py": BUGGY, "test_dates.py": NOISY_TESTS}
    result = run(tmp_path, OBJECTIVE, [say("I will look at it.", "architect")], files=files)
    receipt = str(result.ended("run_check")[0].payload["output"])
    assert "warnings summary" in receipt and len(split_receipt(receipt)[1]) > 3000  # the noise is there
    context = next(m.content for m in result.requests("architect")[0].messages if "Baseline before" in str(m.content))
    shown = receipt_excerpt(receipt)
    assert shown in context
    # The first failure's assertion and location, and the short summary with the closing counts.
    assert "E       assert (2024, 15, 3) == (2024, 3, 15)" in shown
    assert "test_dates.py:14: AssertionError" in shown
    assert "short test summary info" in shown and "FAILED test_dates.py::test_parses_year_month_day" in shown
    assert "2 failed, 40 passed" in shown
    # The warnings went first; the cut markers count exactly what they stand for.
    assert shown.count("DeprecationWarning") < 3 and "characters of output cut" in shown
    assert original_length(split_receipt(shown)[1]) == original_length(split_receipt(receipt)[1])


def test_a_frozen_plan_is_told_to_the_lead_and_never_reaches_a_worker(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped return in dates.py"),
        *fix_turns(),
        call("run_check", "architect", check_id="unittest", phase="verify"),
    ]
    result = run(tmp_path, OBJECTIVE, turns)
    coder = result.requests("coder")
    assert len(coder) == 3 and result.model.remaining == 0
    assert not any("plan: frozen" in _contents(r) for r in coder)
    assert "plan: frozen" in _contents(result.requests("architect")[-1])


def test_the_architect_is_told_its_workers_run_no_commands_and_the_closing_review_it_then_gets(
    tmp_path: Path,
) -> None:
    review = {"name": "review_criteria", "arguments": {"met": [2], "note": "the bullet is there"}}
    turns = [
        call("plan_task", "architect", criteria=["unittest passes", "CHANGELOG.md gets a bullet"]),
        call("coder", "architect", task="fix the swapped return in dates.py and add a CHANGELOG.md bullet"),
        *fix_turns()[:2],
        call("create_file", "coder", path="CHANGELOG.md", content="- parse_date keeps the month\n"),
        call("report_task", "coder", status="done", summary="fixed and logged"),
        call("run_check", "architect", check_id="unittest", phase="verify"),
        {"role": "architect", "tool_calls": [review]},
    ]
    result = run(tmp_path, OBJECTIVE, turns)
    *working, closing = result.requests("architect")
    system = working[0].system
    assert all(r.system == system for r in [*working, closing])  # byte-stable
    assert "Workers run no commands" in system
    assert "A passing verify of all selected checks ends the run" in system
    # Tester for behaviour changes, except where the request already gives the expected results.
    assert "use tester(task) for behavior changes" in system and "unless the request gives expected results" in system
    assert roles.REVIEW_NOTE in system and "End with a short summary." not in system
    # What the prompt says happens: after the passing verify, one closing review request.
    assert "Final verification passed" in _contents(closing) and result.json["status"] == "completed"
    # A lead without the review tool (the small profile) is not told of a review it never gets.
    assert roles.REVIEW_NOTE not in roles.architect("small", "json").system_prompt


def test_the_coder_edits_lines_its_assignment_shows_without_being_told_to_read_them_again(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", path="dates.py"),
        call("coder", "architect", task="fix the swapped return on line 6 of dates.py"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY)),
        call("report_task", "coder", status="done", summary="swapped month and day back"),
        call("run_check", "architect", check_id="unittest", phase="verify"),
    ]
    result = run(tmp_path, OBJECTIVE, turns)
    first = result.requests("coder")[0]
    assert "read the file unless your assignment shows the lines and their revision" in first.system
    assert "no need to read these lines again" in _contents(first) and sha(BUGGY) in _contents(first)
    assert not [e for e in result.ended("read_file") if e.agent == "coder"]
    assert (result.root / "dates.py").read_text().endswith(FIXED_LINE)


BIG = "".join(f"def helper_{n:02d}():\n    return {n}\n\n\n" for n in range(30)) + (
    "class Table:\n" + "".join(f"    def column_{n:02d}(self):\n        return {n}\n\n" for n in range(20))
)


def test_a_cut_outline_with_a_path_advises_what_the_call_has_not_done(tmp_path: Path) -> None:
    turns = [
        call("code_context", "architect", "outline_1", symbol="big", operation="outline", path="big.py"),
        say("big.py has helpers and a Table class.", "architect"),
    ]
    files = {"dates.py": BUGGY, "big.py": BIG}
    result = run(tmp_path, "what is in big.py?", turns, files=files, surface="question")
    answer = next(m.content for m in result.requests("architect")[1].messages if m.tool_call_id == "outline_1")
    note = next(line for line in str(answer).splitlines() if "more results not shown" in line)
    assert note.count("11 more results not shown") == 1
    assert "pass path" not in note and "narrower path" not in note and "qualify" not in note
    assert "big.Table.column_09 at big.py:" in note and "outline big.Table for its members" in note


PASSING_TESTS = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n"


def test_after_a_passing_baseline_the_lead_is_told_which_test_modules_the_checks_run(tmp_path: Path) -> None:
    files = {"dates.py": BUGGY, "tests/__init__.py": "", "tests/test_dates.py": PASSING_TESTS}
    passing = run(
        tmp_path / "passing", "parse_date swaps the month and the day", [say("Stopped.", "architect")], files=files
    )
    first = "\n".join(m.content for m in passing.requests("architect")[0].messages)
    assert "Test modules the checks run (1): tests/test_dates.py." in first
    failing = run(tmp_path / "failing", OBJECTIVE, [say("Stopped.", "architect")])  # its failing tests name the module
    assert "Test modules the checks run" not in "\n".join(m.content for m in failing.requests("architect")[0].messages)
