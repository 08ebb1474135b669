"""The ids of the tests a runner reports as failed, read whole from its output, line by line.

Formats read:

- pytest: the short summary's ``FAILED id - message`` and ``ERROR id`` lines (``-ra``, ``-rA``),
  ``SUBFAILED[msg] id`` subtest lines, and verbose ``id FAILED  [ 50%]`` lines;
- unittest: ``FAIL: name (module.Class.name)`` and ``ERROR: …`` headers, a subtest's
  ``[msg]`` or ``(key=value)`` kept in the id;
- cargo: ``test path::name ... FAILED`` (doc tests too: ``test src/lib.rs - add (line 5) …``);
- Jest and Vitest: ``✕ name (3 ms)``, ``× name 3ms``, ``● suite › name``,
  ``FAIL file > suite > name``; a bare ``FAIL file`` only when no test in it is named;
- the node test runner: TAP ``not ok N - name`` (not ``# TODO``/``# SKIP``) and ``✖ name``.

An id is everything that names the test, spaces, brackets, unicode and `` - `` included: a
pytest id ends at the first `` - `` outside its brackets that starts the message. Ids are
returned in order of first appearance, without repeats, at most ``MAX_FAILED_TESTS``; a
runner's short title is dropped when a longer id of the same test ends with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

MAX_FAILED_TESTS = 50
_MAX_ID_CHARS = 300
_MAX_LINE_CHARS = 4000
"""Longer lines are read up to this many characters: no id is that long, and matching stays linear."""

_PYTEST_SUMMARY = re.compile(r"^(?:\[gw\d+\] \[\s*\d+%\] )?(?:FAILED|ERROR) (?P<rest>[^\s(].*)$")
_PYTEST_SUBTEST = re.compile(r"^SUBFAILED(?P<rest>[(\[].*)$")
_PYTEST_VERBOSE = re.compile(r"^(?P<id>\S.*?) (?:FAILED|ERROR)(?: +\[ *\d+%\])?$")
_UNITTEST = re.compile(r"^(?:FAIL|ERROR): (?P<name>\S+) \((?P<where>[^()\s]+)\)(?P<sub>.*)$")
_CARGO = re.compile(r"^test (?P<id>.+) \.\.\. FAILED$")
_CROSS = re.compile(r"^\s*[✕×✖] (?P<id>.+?)(?: \(\d+(?:\.\d+)? ?m?s\)| \d+(?:\.\d+)?ms)?$")
_BULLET = re.compile(r"^\s*● (?P<id>.+ › .+)$")
_FAIL_FILE = re.compile(r"^\s*FAIL\s+(?P<id>\S+(?: > .+)?)$")
_TAP = re.compile(r"^\s*not ok \d+(?: -)?(?: (?P<id>.*))?$")
_TAP_DIRECTIVE = re.compile(r"\s#\s*(?:TODO|SKIP)\b", re.I)
_MAY_NAME = re.compile(r"FAIL|ERROR|not ok|[✕×✖●]")
"""Every line that names a failure contains one of these; other lines are passed over at once."""
_NOT_TITLES = frozenset({"failing tests:"})
"""Lines of the node spec reporter's summary that only introduce the failures."""
_SUFFIX_SEPARATORS = (" > ", " › ")


def failed_tests(output: str) -> tuple[str, ...]:
    """The failing test ids the runner named, in order of first appearance."""
    tests: dict[str, None] = {}
    files: dict[str, None] = {}
    for kind, test_id in _named(output):
        test_id = test_id.strip()[:_MAX_ID_CHARS]
        if test_id and test_id not in _NOT_TITLES:
            (files if kind == "file" else tests).setdefault(test_id, None)
    titles = {title for test_id in tests for title in _shorter_titles(test_id)}
    ids = [test_id for test_id in tests if test_id not in titles] or list(files)
    return tuple(ids[:MAX_FAILED_TESTS])


def _shorter_titles(test_id: str) -> Iterator[str]:
    """What follows each `` > `` or `` › `` in an id: the same test as a runner's shorter lines name it."""
    for separator in _SUFFIX_SEPARATORS:
        start = test_id.find(separator)
        while start >= 0:
            yield test_id[start + len(separator) :]
            start = test_id.find(separator, start + 1)


def _named(output: str) -> Iterator[tuple[str, str]]:
    """``(kind, id)`` for every line that names a failed test; kind ``file`` names only a file."""
    for raw in output.splitlines():
        line = raw[:_MAX_LINE_CHARS].rstrip()
        if not _MAY_NAME.search(line):
            continue
        if match := _PYTEST_SUMMARY.match(line):
            found = pytest_id(match["rest"])
            if found is not None:
                yield "test", found
        elif match := _PYTEST_SUBTEST.match(line):
            yield from _subtest(match["rest"])
        elif match := _UNITTEST.match(line):
            yield "test", _unittest_id(match["name"], match["where"], match["sub"])
        elif match := _CARGO.match(line):
            yield "test", match["id"]
        elif (match := _PYTEST_VERBOSE.match(line)) and "::" in match["id"]:
            yield "test", match["id"]
        elif match := _CROSS.match(line) or _BULLET.match(line):
            yield "test", match["id"]
        elif match := _FAIL_FILE.match(line):
            yield ("test" if " > " in match["id"] else "file"), match["id"]
        elif (match := _TAP.match(line)) and match["id"] and not _TAP_DIRECTIVE.search(match["id"]):
            yield "test", match["id"]


def pytest_id(rest: str) -> str | None:
    """The node id at the start of a pytest summary line's ``rest`` (after ``FAILED``/``ERROR``).

    The id ends at the first `` - `` outside brackets, unless what follows still reads as the
    rest of a node id (a folder named ``a - b``). ``None`` when it names no test or file.
    """
    test_id = rest
    depth = 0
    for index, char in enumerate(rest):
        depth += (char == "[") - (char == "]")
        if depth == 0 and rest.startswith(" - ", index) and _ends_id(rest, index):
            test_id = rest[:index]
            break
    else:
        if depth > 0 and "] - " in rest:
            # Unbalanced brackets in a parameter: the id ends at its closing bracket.
            test_id = rest[: rest.index("] - ") + 1]
    looks_like_file = re.fullmatch(r"\S+\.\w+", test_id) is not None
    return test_id if "::" in test_id or looks_like_file else None


def _ends_id(rest: str, index: int) -> bool:
    after = rest[index + 3 :].split(" ", 1)[0]
    return "::" in rest[:index] or "::" not in after


def _subtest(rest: str) -> Iterator[tuple[str, str]]:
    """``SUBFAILED[msg] id - …`` / ``SUBFAILED(key=value) id - …``: the id with its subtest."""
    close = {"[": "]", "(": ")"}[rest[0]]
    depth = 0
    for index, char in enumerate(rest):
        depth += (char == rest[0]) - (char == close)
        if depth == 0:
            found = pytest_id(rest[index + 1 :].lstrip())
            if found is not None:
                yield "test", f"{found} {rest[: index + 1]}"
            return


def _unittest_id(name: str, where: str, sub: str) -> str:
    """``module.Class.name`` (older Pythons print only ``module.Class``), then any subtest."""
    test_id = where if where.endswith(f".{name}") else f"{where}.{name}"
    return f"{test_id} {sub.strip()}" if sub.strip() else test_id


def short_name(test_id: str) -> str:
    """The test's own name (``tests/test_x.py::T::test_y[1.0 MB]`` → ``test_y``), for matching prose."""
    head = re.split(r"\[| \(", test_id, maxsplit=1)[0]
    last = re.split(r"::| > | › | - ", head)[-1].strip()
    return last.rsplit(".", 1)[-1] if " " not in last else last
