"""The ids of the tests a runner reports as failed, read from its output.

pytest's short summary (``FAILED path::test - …``, ``ERROR path``), unittest's ``FAIL: name
(module.Class.name)`` headers, cargo's ``test path ... FAILED`` lines, Jest's and Vitest's
``✕``/``×``/``FAIL … > name`` lines and the node test runner's TAP ``not ok N - name``. Ids are
returned in order of first appearance, without repeats, at most ``MAX_FAILED_TESTS``.
"""

from __future__ import annotations

import re

MAX_FAILED_TESTS = 50
_MAX_ID_CHARS = 300

_PATTERNS = (
    # pytest short test summary: "FAILED tests/test_x.py::test_y - AssertionError: ..." / "ERROR tests/x.py"
    # (unittest's closing "FAILED (failures=1)" is not an id)
    re.compile(r"^(?:FAILED|ERROR) ([^\s(]\S*?)(?: - .*)?$", re.M),
    # unittest: "FAIL: test_y (test_x.XTest.test_y)" / "ERROR: test_y (test_x.XTest.test_y)"
    re.compile(r"^(?:FAIL|ERROR): \S+ \(([\w.]+)\)", re.M),
    # cargo: "test tests::adds ... FAILED"
    re.compile(r"^test (\S+) \.\.\. FAILED$", re.M),
    # Vitest: " FAIL  src/a.test.ts > suite > name"; Jest: "  ✕ name (3 ms)"; Vitest list: "  × name"
    re.compile(r"^\s*FAIL\s+(\S+ > .+?)\s*$", re.M),
    re.compile(r"^\s*[✕×] (.+?)(?: \(\d+(?:\.\d+)? ?m?s\))?\s*$", re.M),
    # node --test / TAP: "not ok 2 - adds numbers"
    re.compile(r"^\s*not ok \d+ - (.+?)\s*$", re.M),
)


def failed_tests(output: str) -> tuple[str, ...]:
    """The failing test ids the runner named, in order of first appearance."""
    found: list[tuple[int, str]] = []
    for pattern in _PATTERNS:
        found.extend((match.start(), match.group(1).strip()) for match in pattern.finditer(output))
    ids: dict[str, None] = {}
    for _, test_id in sorted(found):
        if test_id and test_id not in ids:
            ids[test_id[:_MAX_ID_CHARS]] = None
        if len(ids) >= MAX_FAILED_TESTS:
            break
    return tuple(ids)


def short_name(test_id: str) -> str:
    """The last component of an id (``tests/test_x.py::T::test_y`` → ``test_y``), for matching prose."""
    return re.split(r"::|\.| > ", test_id)[-1].strip()
