"""A failing check's excerpt keeps the failures and the short summary of a real pytest run and
cuts its warnings first; every cut marker counts exactly what it stands for, whatever the budget
and whether the command journal already cut the output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.checks.output_excerpt import check_output_excerpt
from protoagent.checks.receipts import RESULT_OUTPUT_CHARS
from protoagent.excerpts import original_length

TESTS = """import warnings

import pytest


@pytest.mark.parametrize("n", range(60))
def test_warns(n):
    warnings.warn(DeprecationWarning(f"old api {n} is deprecated and will be removed in a later release"))


def test_first():
    value = {"month": 15, "day": 3}
    assert value["month"] == 3


def test_second():
    assert "abc".upper() == "ABD", "upper keeps the letters"
"""


HELPER_TESTS = """import warnings

import pytest


@pytest.mark.parametrize("n", range(60))
def test_warns(n):
    warnings.warn(DeprecationWarning(f"old api {n} is deprecated and will be removed in a later release"))


def check_equal(expected, got):
    print("Expected:", expected)
    print("Got:", got)
    assert expected == got


def test_helper():
    check_equal({"month": 3, "day": 3, "year": 2024}, {"month": 15, "day": 3, "year": 2024})


def test_noisy():
    print("noise " * 200)
    assert "abc".upper() == "ABD", "upper keeps the letters"
"""


def _run_suite(tmp_path_factory: pytest.TempPathFactory, source: str, ci: bool = False) -> str:
    root: Path = tmp_path_factory.mktemp("suite")
    (root / "test_suite.py").write_text(source)
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_suite.py"]
    # pytest prints whole assertion diffs and summary lines when CI or BUILD_NUMBER is set: the
    # suite is run as on a person's terminal, so the layout these tests rank is the same in CI.
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")} | ({"CI": "true"} if ci else {})
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    return done.stdout


@pytest.fixture(scope="module")
def pytest_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    return _run_suite(tmp_path_factory, TESTS)


@pytest.fixture(scope="module")
def helper_output(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A failing test whose helper prints what it expected and got before asserting."""
    return _run_suite(tmp_path_factory, HELPER_TESTS)


def test_the_first_failure_and_the_short_summary_survive_and_the_warnings_are_cut(pytest_output: str) -> None:
    shown = check_output_excerpt(pytest_output, 1500)
    assert len(shown) <= 1500 < len(pytest_output)
    assert "E       assert 15 == 3" in shown and "test_suite.py:13: AssertionError" in shown
    assert "E       AssertionError: upper keeps the letters" in shown
    assert "FAILED test_suite.py::test_first" in shown and "2 failed, 60 passed" in shown
    assert shown.count("DeprecationWarning") <= 2


def test_the_first_failures_captured_stdout_survives_at_the_default_budget(helper_output: str) -> None:
    shown = check_output_excerpt(helper_output, RESULT_OUTPUT_CHARS)
    assert len(shown) <= RESULT_OUTPUT_CHARS < len(helper_output)
    assert "Got: {'month': 15, 'day': 3, 'year': 2024}" in shown
    assert "Captured stdout call" in shown and "test_suite.py:14: AssertionError" in shown
    assert "E       AssertionError: upper keeps the letters" in shown and "noise noise" not in shown
    assert "FAILED test_suite.py::test_helper" in shown and "2 failed, 60 passed" in shown
    assert original_length(shown) == len(helper_output)


@pytest.mark.parametrize("limit", [60, 200, 400, 800, 1500, 3000])
def test_cut_markers_count_exactly_with_captured_output_at_every_budget(helper_output: str, limit: int) -> None:
    shown = check_output_excerpt(helper_output, limit)
    assert len(shown) <= limit and original_length(shown) == len(helper_output)


@pytest.mark.parametrize("limit", [60, 200, 400, 800, 1500, 3000])
def test_cut_markers_count_exactly_what_was_cut_at_every_budget(pytest_output: str, limit: int) -> None:
    shown = check_output_excerpt(pytest_output, limit)
    assert original_length(shown) == len(pytest_output)
    assert "2 failed, 60 passed" in shown or limit < 100


def test_a_journal_cut_inside_the_output_is_counted_in(pytest_output: str) -> None:
    middle = len(pytest_output) // 2
    middle = pytest_output.index("\n", middle) + 1
    journal = f"{pytest_output[:middle]}\n[... 5000 bytes omitted; full output: out.log ...]\n{pytest_output[middle:]}"
    shown = check_output_excerpt(journal, 1200)
    assert original_length(shown) == original_length(journal) == len(pytest_output) + 5000


def test_output_without_a_failures_section_keeps_its_tail() -> None:
    text = "".join(f"line {n}\n" for n in range(500)) + "FAILED (failures=1)\n"
    shown = check_output_excerpt(text, 300)
    assert shown.startswith("[... ") and shown.endswith("FAILED (failures=1)\n")
    assert original_length(shown) == len(text)


@pytest.mark.parametrize("limit", [400, 1500])
def test_a_ci_layout_keeps_the_closing_counts_and_the_first_assertion(
    tmp_path_factory: pytest.TempPathFactory, limit: int
) -> None:
    text = _run_suite(tmp_path_factory, HELPER_TESTS, ci=True)  # long summary lines with whole diffs
    shown = check_output_excerpt(text, limit)
    assert len(shown) <= limit and original_length(shown) == len(text)
    assert "2 failed, 60 passed" in shown
    assert limit < 1500 or "'month': 3" in shown  # the actual value, in the first failure's E lines
