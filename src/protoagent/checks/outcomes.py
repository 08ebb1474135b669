"""Classifying a finished check run: how many tests ran and whether it passed, failed, timed out
or could not run because a runner or external module is missing.

These are pure functions over the run's exit status and combined output (plus, for missing
modules, a look at which top-level names the project itself provides).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from protoagent.checks.failures import failed_tests

Outcome = Literal["passed", "failed", "unavailable", "timed_out", "error"]
"""How a check ended: ``passed`` is the only outcome that can verify a change."""

PYTEST_NO_TESTS_EXIT = 5
"""pytest's exit status when it collected no tests."""

ZERO_TESTS_NOTE = "zero tests ran; zero tests never verify a code change"

_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.M)
_UNITTEST_NONE = re.compile(r"^NO TESTS RAN\b", re.M)
_PYTEST_SUMMARY = re.compile(r"^=*\s*((?:\d+ [a-z]+(?: [a-z]+)?(?:, )?)+) in [\d.]+s\b", re.M)
"""pytest's last line: ``3 passed, 1 failed in 0.2s``, also with ``66 subtests passed`` in it."""
_PYTEST_NONE = re.compile(r"^=*\s*no tests ran\b", re.M)
_PYTEST_EXECUTED = re.compile(r"(\d+) (passed|failed|xfailed|xpassed)\b")
_CARGO_RESULT = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed;", re.M)
_MISSING_MODULE = re.compile(r"No module named '?([A-Za-z_][\w.]*)'?")
_MISSING_PROGRAM = (
    re.compile(r"^(?:/\S*/)?(?:sh|bash|dash)(?:: line \d+)?: (?:\d+: )?([\w.+-]+): (?:command )?not found", re.M),
    re.compile(r"^(?:/usr/bin/)?env: '?([\w.+/-]+?)'?: No such file or directory", re.M),
    re.compile(r"\b(npm): (?:command )?not found"),
    re.compile(r"\bspawn ([\w.+/-]+) ENOENT\b"),
)

_TOOLCHAIN_START = re.compile(
    r"^.*(?:rustup could not choose a version|toolchain '[^']+' is not installed|no default toolchain"
    r"|failed to download|Unable to update registry|failed to get `[^`]+` as a dependency"
    r"|Could not resolve host|network failure seems to have happened|failed to load source for dependency"
    r"|npm (?:ERR!|error) code (?:ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT)"
    r"|getaddrinfo (?:ENOTFOUND|EAI_AGAIN)).*$",
    re.M | re.I,
)
_START_EXCERPT_LINES = 3
_START_EXCERPT_CHARS = 400


@dataclass(frozen=True, slots=True)
class Verdict:
    """The classification of one finished run."""

    outcome: Outcome
    tests_run: int | None
    """Tests the runner reports as executed; ``None`` when its output cannot be counted."""
    note: str | None = None
    """A sentence explaining an outcome the exit status alone does not show."""
    unavailable_reason: str | None = None
    failed_tests: tuple[str, ...] = ()
    """The ids of the tests the runner named as failed (see :mod:`protoagent.checks.failures`)."""


def count_tests(output: str, exit_code: int | None = None, *, pytest: bool = False) -> int | None:
    """Tests executed according to unittest, pytest or cargo output (summed over every summary
    found); ``None`` when no known summary appears. For a ``pytest`` run, exit status 5 means
    zero tests even without a summary line."""
    counts: list[int] = []
    counts += [int(match) for match in _UNITTEST_RAN.findall(output)]
    counts += [0 for _ in _UNITTEST_NONE.finditer(output)]
    for summary in _PYTEST_SUMMARY.findall(output):
        counts.append(sum(int(n) for n, _kind in _PYTEST_EXECUTED.findall(summary)))
    counts += [0 for _ in _PYTEST_NONE.finditer(output)]
    counts += [int(passed) + int(failed) for passed, failed in _CARGO_RESULT.findall(output)]
    if counts:
        return sum(counts)
    return 0 if pytest and exit_code == PYTEST_NO_TESTS_EXIT else None


def missing_modules(output: str) -> list[str]:
    """The top-level names of every ``No module named ...`` report, in order, without repeats."""
    names = (match.split(".")[0] for match in _MISSING_MODULE.findall(output))
    return list(dict.fromkeys(names))


def is_project_module(name: str, bases: Sequence[str]) -> bool:
    """True when ``name`` is a top-level module or package the project provides itself:
    ``name.py``, ``name/`` or ``src/name`` (or ``src/name.py``) under one of ``bases``."""
    for base in bases:
        candidates = (f"{name}.py", name, os.path.join("src", name), os.path.join("src", f"{name}.py"))
        if any(os.path.exists(os.path.join(base, candidate)) for candidate in candidates):
            return True
    return False


def missing_runner(output: str, bases: Sequence[str]) -> str | None:
    """Why the run could not measure anything because something outside the project is missing
    (a runner program or an external Python module), or ``None``.

    A missing module the project provides itself (``bases`` hold it) is a repairable code or
    import-path problem, so it does not count here.
    """
    external = [name for name in missing_modules(output) if not is_project_module(name, bases)]
    if external:
        names = ", ".join(repr(name) for name in external)
        return f"the runner or external module {names} is not installed for this check's interpreter"
    for pattern in _MISSING_PROGRAM:
        match = pattern.search(output)
        if match is not None:
            return f"the program {match.group(1)!r} the check needs was not found"
    start = _TOOLCHAIN_START.search(output)
    if start is not None:
        lines = output[start.start() :].splitlines()[:_START_EXCERPT_LINES]
        excerpt = " | ".join(line.strip() for line in lines if line.strip())[:_START_EXCERPT_CHARS]
        return f"the runner could not start (toolchain or dependencies missing, or network needed): {excerpt}"
    return None


_TERMINAL_CODE = re.compile(r"\x1b(?:\[[0-9;?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
"""A terminal control sequence: colour and cursor codes (CSI), titles (OSC), single escapes."""


def without_terminal_codes(text: str) -> str:
    """``text`` without terminal control sequences (a runner that colours its output, as pytest
    does under ``--color=yes`` or ``FORCE_COLOR``): a colour code inside ``38 passed`` is noise to a
    reader and hides the summary from the counts."""
    return _TERMINAL_CODE.sub("", text) if "\x1b" in text else text


def classify(
    exit_code: int | None,
    output: str,
    *,
    timed_out: bool = False,
    terminated: bool = False,
    bases: Sequence[str] = (),
    pytest: bool = False,
) -> Verdict:
    """Classify a finished run. Order: timeout, interruption, missing runner or external module
    (only for a failing exit), zero tests (never a pass, even with exit status 0), exit status.

    ``bases`` are the folders whose top-level modules belong to the project (the workspace root
    and the check's cwd); ``pytest`` says the command runs pytest.
    """
    output = without_terminal_codes(output)
    tests_run = count_tests(output, exit_code, pytest=pytest)
    failing = failed_tests(output) if exit_code != 0 else ()
    if timed_out:
        return Verdict("timed_out", tests_run, "the check ran past its time limit; its process group was stopped")
    if terminated or exit_code is None:
        return Verdict("error", tests_run, "the check was stopped before it finished")
    if exit_code != 0:
        reason = missing_runner(output, bases)
        if reason is not None:
            return Verdict("unavailable", tests_run, reason, unavailable_reason=reason)
    if tests_run == 0:
        return Verdict("failed", 0, ZERO_TESTS_NOTE)
    if exit_code == 0:
        return Verdict("passed", tests_run)
    return Verdict("failed", tests_run, failed_tests=failing)
