"""Which scratch checks run pytest as ``<python> -m pytest ...``, and how such a run is narrowed to
the tests that failed at baseline.

A narrowed argv is the check's own argv with its positional test paths replaced by the failing
test ids (options, ``-k`` and ``-m`` included, stay as they are), so a candidate first runs only
the tests it must fix; the whole check runs only for a candidate that passes them. Positional
arguments are recognised conservatively: a token is a test path only when it does not follow an
option that takes a value and names something that exists under the check's cwd. A run that
selects no test (pytest's usage error or "no tests collected" status, without a collection error
the candidate caused) tells the caller that the ids did not resolve, and it runs the whole check
instead.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

from protoagent.checks.failures import failed_tests

NOT_SELECTED_EXITS = frozenset({4, 5})
"""pytest's exit statuses for "a test id was not found" (usage error) and "no tests collected"."""
_COLLECTION_ERRORS = re.compile(r"ERROR collecting |\d+ errors? during collection")
VALUE_OPTIONS = frozenset(
    {
        "-k", "-m", "-p", "-c", "-o", "-W", "-r", "-n",
        "--rootdir", "--confcutdir", "--config-file", "--basetemp", "--ignore", "--ignore-glob",
        "--deselect", "--override-ini", "--pythonwarnings", "--tb", "--maxfail", "--durations",
        "--junitxml", "--junit-xml", "--log-level", "--log-file", "--cov", "--cov-report",
        "--timeout", "--import-mode", "--capture", "--color", "--dist", "--numprocesses",
        "--cache-dir", "--log-cli-level", "--log-format", "--log-date-format", "--doctest-glob",
        "--junit-prefix", "--report-log", "--randomly-seed",
    }
)  # fmt: skip
"""Options whose value may be the next token (``-k expr``, ``--rootdir dir``)."""


def runs_pytest_module(argv: Sequence[str]) -> bool:
    """Whether ``argv`` is ``<python> -m pytest ...`` (the one form narrowing and forking know)."""
    return len(argv) >= 3 and tuple(argv[1:3]) == ("-m", "pytest") and "python" in os.path.basename(argv[0])


def failing_ids(output: str, cwd: Path) -> tuple[str, ...]:
    """The node ids a baseline pytest run named as failed, each naming a file that exists under
    ``cwd`` (a subtest's message suffix dropped; repeats left out)."""
    ids: dict[str, None] = {}
    for test_id in failed_tests(output):
        node = _without_subtest(test_id)
        path = node.split("::", 1)[0]
        if node and not path.startswith("-") and (cwd / path).is_file():
            ids.setdefault(node, None)
    return tuple(ids)


def narrowed(argv: Sequence[str], cwd: Path, ids: Sequence[str]) -> tuple[str, ...] | None:
    """``argv`` with its test paths replaced by ``ids``; ``None`` when it cannot be narrowed (not
    ``python -m pytest``, no ids, or an id outside every path the check selects)."""
    if not ids or not runs_pytest_module(argv):
        return None
    head, rest = tuple(argv[:3]), list(argv[3:])
    kept: list[str] = []
    paths: list[Path] = []
    for index, token in enumerate(rest):
        after_option = index > 0 and rest[index - 1] in VALUE_OPTIONS
        if not token.startswith("-") and not after_option and os.path.exists(cwd / token.split("::", 1)[0]):
            paths.append((cwd / token.split("::", 1)[0]).resolve())
        else:
            kept.append(token)
    if paths and not all(any(_beneath((cwd / i.split("::", 1)[0]).resolve(), p) for p in paths) for i in ids):
        return None
    return (*head, *kept, *ids)


def not_selected(exit_code: int | None, output: str) -> bool:
    """Whether a narrowed run selected no test because its ids did not resolve (not because the
    candidate broke the import of a test module: that is a failing run like any other)."""
    return exit_code in NOT_SELECTED_EXITS and _COLLECTION_ERRORS.search(output) is None


def _beneath(path: Path, scope: Path) -> bool:
    return path == scope or path.is_relative_to(scope)


def _without_subtest(test_id: str) -> str:
    """``tests/t.py::test_x[a b] [msg]`` → ``tests/t.py::test_x[a b]``: cut at the first space
    outside brackets."""
    depth = 0
    for index, char in enumerate(test_id):
        depth += (char == "[") - (char == "]")
        if char == " " and depth == 0:
            return test_id[:index]
    return test_id
