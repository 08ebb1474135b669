"""Failing tests are named, and failures that were there before the change are told apart."""

from __future__ import annotations

from pathlib import Path

from protoagent.checks.failures import failed_tests

from .support import BUGGY, BUGGY_LINE, FIXED_LINE, call, run_workflow, say, sha

LONG_DIFF_TEST = """import unittest

from dates import parse_date


class ParseDateTest(unittest.TestCase):
    def test_parses_year_month_day(self):
        self.assertEqual(parse_date("2024-03-15"), (2024, 3, 15))

    def test_unrelated_long_list(self):
        self.assertEqual(list(range(4000)), list(range(1, 4001)))

    def test_year_comes_first(self):
        self.assertEqual(parse_date("2024-03-15")[0], 2024)
"""
BROKEN_BEFORE = {"dates.py": BUGGY, "test_dates.py": LONG_DIFF_TEST}
OBJECTIVE = "fix parse_date: it swaps month and day"


def fix_turns() -> list[dict[str, object]]:
    return [
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY)),
        call("report_task", "coder", status="done", summary="swapped month and day back"),
        say("Fixed parse_date.", "architect"),
    ]


def test_failed_test_ids_are_parsed_from_pytest_unittest_cargo_and_node_output() -> None:
    assert failed_tests("FAILED tests/test_a.py::test_bad - assert 1 == 2\nERROR tests/test_b.py\n") == (
        "tests/test_a.py::test_bad",
        "tests/test_b.py",
    )
    assert failed_tests("FAIL: test_x (test_u.T.test_x)\nERROR: test_e (test_u.T.test_e)\n") == (
        "test_u.T.test_x",
        "test_u.T.test_e",
    )
    assert failed_tests("test tests::adds ... FAILED\ntest tests::ok ... ok\n") == ("tests::adds",)
    assert failed_tests("not ok 1 - adds numbers\nok 2 - other\n") == ("adds numbers",)
    assert failed_tests("ok 1 - fine\n") == ()


def test_baseline_result_leads_with_the_failing_test_ids_before_a_long_diff(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, OBJECTIVE, fix_turns(), files=BROKEN_BEFORE)
    baseline = run.ended("run_check")[0]
    lines = baseline.payload["output"].splitlines()
    assert lines[0].startswith("error: check unittest baseline: failed") or "baseline: failed" in lines[0]
    failing = next(line for line in lines[:3] if line.startswith("failing tests: "))
    assert "test_dates.ParseDateTest.test_parses_year_month_day" in failing
    assert "test_dates.ParseDateTest.test_unrelated_long_list" in failing


def test_preexisting_failures_are_reported_and_open_no_repair(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, OBJECTIVE, fix_turns(), files=BROKEN_BEFORE)
    verify = [c for c in run.json["checks"] if c["phase"] == "verify"]
    assert len(verify) == 1 and verify[0]["outcome"] == "failed"
    assert verify[0]["failed_tests"] == ["test_dates.ParseDateTest.test_unrelated_long_list"]
    assert verify[0]["preexisting_failures"] == ["test_dates.ParseDateTest.test_unrelated_long_list"]
    assert not [e for e in run.of("workflow.phase") if e.payload["phase"] == "repair"]
    assert run.json["applied"] is True and run.json["verified"] is False
    note = next(n for n in run.json["notes"] if "failed before the change too" in n)
    assert "test_unrelated_long_list" in note and "every other test it ran passes" in note


def test_new_failures_are_the_only_ones_a_repair_names(tmp_path: Path) -> None:
    broken = "    return int(day), int(month), int(year)\n"
    turns = [
        call("coder", "architect", task="fix dates.py"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=broken, expected_revision=sha(BUGGY)),
        say("done", "coder"),
        say("tried", "architect"),
        say("no more", "architect"),
        say("no more", "architect"),
        say("no more", "architect"),
    ]
    files = {"dates.py": BUGGY, "test_dates.py": LONG_DIFF_TEST}
    run = run_workflow(tmp_path, "fix parse_date and make test_parses_year_month_day pass", turns, files=files)
    repairs = [e for e in run.of("context.injected") if "Repair:" in str(e.payload.get("text", ""))]
    assert repairs, "a failing verify with the target test still failing must open a repair"
    text = str(repairs[0].payload["text"])
    fix = text.split("failing tests to fix: ")[1].split(";")[0]
    # New failures, and the old failure the objective names, are to fix; the unrelated one is not.
    assert fix == "test_dates.ParseDateTest.test_parses_year_month_day, test_dates.ParseDateTest.test_year_comes_first"
    assert "already failing before the change (leave them): " in text
    assert "test_dates.ParseDateTest.test_unrelated_long_list" in text.split("leave them): ")[1].splitlines()[0]


def test_notes_say_zero_tests_ran(tmp_path: Path) -> None:
    files = {"dates.py": BUGGY, "test_dates.py": "import unittest\n"}
    run = run_workflow(tmp_path, OBJECTIVE, fix_turns(), files=files)
    assert any("zero tests ran; zero tests never verify a change" in n for n in run.json["notes"])


def test_unavailable_note_does_not_claim_edits_in_a_run_that_applied_nothing(tmp_path: Path) -> None:
    import json

    config = {
        "checks": [
            {
                "id": "t",
                "argv": ["python", "-m", "no_such_runner_xyz"],
                "cwd": ".",
                "env": {"PATH": "/usr/bin:/bin"},
                "paths": ["dates.py"],
            }
        ]
    }
    files = {"dates.py": BUGGY, ".protoagent/project.json": json.dumps(config)}
    run = run_workflow(tmp_path, "run the tests", [], files=files, surface="verification")
    assert run.json["verification"] == "unavailable"
    assert not any("edits stay applied" in n for n in run.json["notes"])
    assert any(n.startswith("setup: check 't' could not run") for n in run.json["notes"])


def test_an_unrelated_change_in_a_repository_with_failing_tests_opens_no_repair(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="add a module docstring line to dates.py"),
        call(
            "edit_file",
            "coder",
            path="dates.py",
            old='"""Parse ISO calendar dates."""',
            new='"""Parse ISO calendar dates (reviewed)."""',
            expected_revision=sha(BUGGY),
        ),
        call("report_task", "coder", status="done", summary="docstring updated"),
        say("Docstring updated.", "architect"),
    ]
    run = run_workflow(tmp_path, "note in the module docstring that it was reviewed", turns, files=BROKEN_BEFORE)
    assert not [e for e in run.of("workflow.phase") if e.payload["phase"] == "repair"]
    note = next(n for n in run.json["notes"] if "failed before the change too" in n)
    assert "test_parses_year_month_day" in note and "test_unrelated_long_list" in note
    assert run.json["applied"] is True and run.json["verified"] is False


def test_a_fix_that_did_not_fix_the_failing_test_is_repaired_and_says_so(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix dates.py"),
        call(
            "edit_file",
            "coder",
            path="dates.py",
            old='"""Parse ISO calendar dates."""',
            new='"""Parse ISO calendar dates."""\n',
            expected_revision=sha(BUGGY),
        ),
        call("report_task", "coder", status="done", summary="tried"),
        say("Tried.", "architect"),
        say("no more", "architect"),
        say("no more", "architect"),
        say("no more", "architect"),
    ]
    files = {"dates.py": BUGGY, "test_dates.py": LONG_DIFF_TEST.replace("test_unrelated", "_unused")}
    run = run_workflow(tmp_path, "fix the failing date parser test", turns, files=files)
    repairs = [e for e in run.of("context.injected") if "Repair:" in str(e.payload.get("text", ""))]
    assert repairs, "the failing test the objective is about must still be repaired"
    text = str(repairs[0].payload["text"])
    assert "failing tests to fix: test_dates.ParseDateTest.test_parses_year_month_day" in text
    assert "leave them" not in text
    assert any("the change did not fix them" in n for n in run.json["notes"])
