"""Classifying check runs: counting tests from runner output, zero tests never passing, missing
runners and external modules being unavailable while the project's own modules stay failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from protoagent.checks import CheckSpec
from protoagent.checks.outcomes import (
    ZERO_TESTS_NOTE,
    classify,
    count_tests,
    is_project_module,
    missing_runner,
    without_terminal_codes,
)
from protoagent.checks.receipts import discovers_from_root

from .support import write_repo

RULE = "-" * 70
UNITTEST_OK = f"..\n{RULE}\nRan 2 tests in 0.001s\n\nOK\n"
UNITTEST_FAIL = "F.\n======\nFAIL: test_x\n------\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n"
UNITTEST_EMPTY = f"\n{RULE}\nRan 0 tests in 0.000s\n\nOK\n"
PYTEST_MIXED = (
    "..F.\n=========== short test summary info ===========\nFAILED t.py::test_a\n"
    "1 failed, 3 passed, 1 skipped, 2 warnings in 0.12s\n"
)
PYTEST_FULL = "============================== 4 passed, 1 xfailed in 0.05s ==============================\n"
CARGO = (
    "running 3 tests\ntest a ... ok\n\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
    "running 2 tests\n\ntest result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n"
    "   Doc-tests demo\n\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured\n"
)


@pytest.mark.parametrize(
    ("output", "exit_code", "expected"),
    [
        (UNITTEST_OK, 0, 2),
        (UNITTEST_FAIL, 1, 2),
        (UNITTEST_EMPTY, 0, 0),
        ("\n----\nRan 0 tests in 0.000s\n\nNO TESTS RAN\n", 5, 0),
        ("Ran 1 test in 0.000s\n\nOK\n", 0, 1),
        (PYTEST_MIXED, 1, 4),
        (PYTEST_FULL, 0, 5),
        ("\nno tests ran in 0.01s\n", 5, 0),
        ("===== no tests ran in 0.01s =====\n", 5, 0),
        ("===== 3 deselected in 0.01s =====\n", 5, 0),
        ("58 passed, 66 subtests passed in 0.21s\n", 0, 58),
        ("=== 1 failed, 57 passed, 2 subtests failed, 64 subtests passed in 0.3s ===\n", 1, 58),
        (CARGO, 101, 5),
        ("build finished\n", 0, None),
        ("", 1, None),
    ],
)
def test_counts_tests_from_runner_output(output: str, exit_code: int, expected: int | None) -> None:
    assert count_tests(output, exit_code) == expected


def test_pytest_exit_status_five_means_zero_tests_without_a_summary() -> None:
    assert count_tests("", 5, pytest=True) == 0
    assert count_tests("", 5) is None


def test_zero_tests_never_pass_even_with_exit_status_zero() -> None:
    verdict = classify(0, UNITTEST_EMPTY)
    assert verdict.outcome == "failed"
    assert verdict.tests_run == 0
    assert verdict.note == ZERO_TESTS_NOTE


def test_counted_tests_with_exit_status_zero_pass() -> None:
    verdict = classify(0, UNITTEST_OK)
    assert (verdict.outcome, verdict.tests_run, verdict.note) == ("passed", 2, None)


def test_uncountable_output_follows_the_exit_status() -> None:
    assert classify(0, "lint clean\n").outcome == "passed"
    assert classify(2, "lint: 3 problems\n").outcome == "failed"
    assert classify(0, "lint clean\n").tests_run is None


def test_failing_suite_fails() -> None:
    assert classify(1, UNITTEST_FAIL).outcome == "failed"


def test_timeout_is_timed_out_and_interruption_an_error() -> None:
    assert classify(-15, "", timed_out=True).outcome == "timed_out"
    assert classify(-9, "", terminated=True).outcome == "error"
    assert classify(None, "").outcome == "error"


def test_missing_pytest_is_unavailable(tmp_path: Path) -> None:
    verdict = classify(1, "/usr/bin/python3: No module named pytest\n", bases=[str(tmp_path)])
    assert verdict.outcome == "unavailable"
    assert verdict.unavailable_reason is not None
    assert "'pytest'" in verdict.unavailable_reason


def test_missing_external_module_is_unavailable(tmp_path: Path) -> None:
    write_repo(tmp_path, {"calc.py": ""})
    output = "ImportError: Failed to import test module: test_calc\nModuleNotFoundError: No module named 'requests'\n"
    assert classify(1, output + "Ran 1 test in 0.0s\n", bases=[str(tmp_path)]).outcome == "unavailable"


@pytest.mark.parametrize("layout", ["calc.py", "calc/__init__.py", "src/calc/__init__.py", "src/calc.py"])
def test_the_projects_own_missing_module_stays_failed(tmp_path: Path, layout: str) -> None:
    write_repo(tmp_path, {layout: ""})
    output = "ModuleNotFoundError: No module named 'calc.parsing'\nRan 1 test in 0.0s\n\nFAILED (errors=1)\n"
    verdict = classify(1, output, bases=[str(tmp_path)])
    assert verdict.outcome == "failed"
    assert verdict.unavailable_reason is None
    assert is_project_module("calc", [str(tmp_path)])


def test_a_passing_run_mentioning_a_missing_module_still_passes(tmp_path: Path) -> None:
    assert classify(0, "No module named 'optional_extra'\n" + UNITTEST_OK, bases=[str(tmp_path)]).outcome == "passed"


@pytest.mark.parametrize(
    "output",
    [
        "sh: 1: npm: not found\n",
        "/bin/sh: npm: command not found\n",
        "npm: not found\n",
        "Error: spawn jest ENOENT\n",
        "/usr/bin/env: 'node': No such file or directory\n",
    ],
)
def test_missing_programs_are_unavailable(tmp_path: Path, output: str) -> None:
    assert missing_runner(output, [str(tmp_path)]) is not None
    assert classify(127, output, bases=[str(tmp_path)]).outcome == "unavailable"


def test_ordinary_failures_name_no_missing_runner(tmp_path: Path) -> None:
    assert missing_runner(UNITTEST_FAIL + PYTEST_MIXED, [str(tmp_path)]) is None


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("py", "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py"), True),
        (("py", "-s", "-m", "unittest", "discover", "-p", "test_*.py"), True),
        (("py", "-m", "unittest", "discover", "--start-directory", "./"), True),
        (("py", "-m", "unittest", "discover", "-s", "tests", "-t", "."), False),
        (("py", "-m", "pytest", "-q"), False),
    ],
)
def test_root_discovery_commands_are_recognised(argv: tuple[str, ...], expected: bool) -> None:
    assert discovers_from_root(CheckSpec("c", argv)) is expected


def test_a_coloured_pytest_summary_is_counted_and_its_codes_are_dropped() -> None:
    coloured = "\x1b[32m\x1b[1m38 passed\x1b[0m, \x1b[33m1 skipped\x1b[0m\x1b[32m in 0.31s\x1b[0m\n"
    assert classify(0, coloured, pytest=True).tests_run == 38
    assert without_terminal_codes(coloured) == "38 passed, 1 skipped in 0.31s\n"
    assert without_terminal_codes("plain 1 passed in 0.1s") == "plain 1 passed in 0.1s"
