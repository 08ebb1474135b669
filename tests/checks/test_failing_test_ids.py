"""Every failing test a runner names is read whole: ids with spaces, brackets, unicode and ' - '.

pytest ids such as ``test_naturalsize[1.0 MB]`` once fell through the parser, so a receipt listed
2 of 16 failures, ``preexisting_failures`` was computed on that list and localization had nothing
to show. Real pytest and unittest runs pin the formats available here; recorded output pins
cargo, Jest, Vitest and the node test runner.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from tests.workflow.support import call, run_workflow, say, sha

from protoagent.checks.failures import MAX_FAILED_TESTS, failed_tests, short_name
from protoagent.checks.receipts import CheckReceipt
from protoagent.repair.localize import localize
from protoagent.testing import make_repo

HUMANIZE = '''"""Humanize numbers."""


def naturalsize(value):
    return f"{value} B"


def intword(value):
    return str(value)
'''
FIXED_INTWORD = 'def intword(value):\n    return f"{value / 1e6:.1f} million"\n'
TESTS = """import pytest

from humanize import intword, naturalsize


@pytest.mark.parametrize(
    "value, expected",
    [(1_000_000, "1.0 MB"), (2_500_000, "2.5 MB"), (10**9, "1.0 GB"), (1, "1 Byte"), (300, "300 Bytes")],
)
def test_naturalsize(value, expected):
    assert naturalsize(value) == expected


@pytest.mark.parametrize(
    "locale, text",
    [("fr_FR", "999_999_999-1,0 milliard"), ("de_DE", "a - b"), ("ru_RU", "миллион"), ("en_US", "x[y")],
)
def test_localized(locale, text):
    assert naturalsize(len(text)) == text


@pytest.mark.parametrize("value, expected", [(1_000_000, "1.0 million"), (2_000_000, "2.0 million")])
def test_intword(value, expected):
    assert intword(value) == expected
"""
PYTEST_IDS = [
    "test_humanize.py::test_naturalsize[1000000-1.0 MB]",
    "test_humanize.py::test_naturalsize[2500000-2.5 MB]",
    "test_humanize.py::test_naturalsize[1000000000-1.0 GB]",
    "test_humanize.py::test_naturalsize[1-1 Byte]",
    "test_humanize.py::test_naturalsize[300-300 Bytes]",
    "test_humanize.py::test_localized[fr_FR-999_999_999-1,0 milliard]",
    "test_humanize.py::test_localized[de_DE-a - b]",
    "test_humanize.py::test_localized[ru_RU-\\u043c\\u0438\\u043b\\u043b\\u0438\\u043e\\u043d]",
    "test_humanize.py::test_localized[en_US-x[y]",
    "test_humanize.py::test_intword[1000000-1.0 million]",
    "test_humanize.py::test_intword[2000000-2.0 million]",
]
UNITTEST = '''import unittest


class Sizes(unittest.TestCase):
    def test_sizes(self):
        for text in ("1.0 MB", "a - b", "ünï [x]"):
            with self.subTest(text):
                self.assertEqual(text, "")

    def test_keyword(self):
        with self.subTest(value="2 kB"):
            self.fail("no")

    def test_plain(self):
        """A docstring line the runner prints under the header."""
        self.assertEqual(1, 2)

    def test_error(self):
        raise ValueError("boom - here")
'''


def _run(root: Path, *args: str) -> str:
    done = subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True, timeout=120)
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def humanize_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("h") / "repo", {"humanize.py": HUMANIZE, "test_humanize.py": TESTS})


@pytest.mark.parametrize("flags", [("-q",), ("-q", "-rA"), ("-q", "-ra"), ("-v",), ("-v", "-rN")])
def test_every_pytest_failure_is_named_whole_in_each_report_format(humanize_repo: Path, flags: tuple[str, ...]) -> None:
    output = _run(humanize_repo, "-m", "pytest", "-p", "no:cacheprovider", *flags)
    assert "11 failed" in output
    assert sorted(failed_tests(output)) == sorted(PYTEST_IDS)


def test_unittest_failures_and_subtests_are_named_with_their_descriptions(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"test_sizes.py": UNITTEST})
    output = _run(root, "-m", "unittest", "test_sizes")
    assert failed_tests(output) == (
        "test_sizes.Sizes.test_error",
        "test_sizes.Sizes.test_keyword (value='2 kB')",
        "test_sizes.Sizes.test_plain",
        "test_sizes.Sizes.test_sizes [1.0 MB]",
        "test_sizes.Sizes.test_sizes [a - b]",
        "test_sizes.Sizes.test_sizes [ünï [x]]",
    )
    pytest_output = _run(root, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_sizes.py")
    assert failed_tests(pytest_output) == (
        "test_sizes.py::Sizes::test_error",
        "test_sizes.py::Sizes::test_keyword (value='2 kB')",
        "test_sizes.py::Sizes::test_plain",
        "test_sizes.py::Sizes::test_sizes [1.0 MB]",
        "test_sizes.py::Sizes::test_sizes [a - b]",
        "test_sizes.py::Sizes::test_sizes [ünï [x]]",
    )


CARGO = """running 3 tests
test tests::adds ... FAILED
test tests::subtracts ... ok
test src/lib.rs - add (line 5) ... FAILED

failures:
    tests::adds

test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 0 filtered out
"""
JEST = """FAIL src/sum.test.js
  sum
    ✓ adds small numbers (2 ms)
    ✕ adds 1.0 MB - sizes (3 ms)
    ✕ keeps [brackets] and ünïcode (1 ms)

  ● sum › adds 1.0 MB - sizes

    expect(received).toBe(expected)

  ● sum › keeps [brackets] and ünïcode

Tests:       2 failed, 1 passed, 3 total
"""
JEST_SUITE = """FAIL src/broken.test.js
  ● Test suite failed to run

    SyntaxError: Unexpected token
"""
VITEST = """ ❯ test/size.test.ts (3 tests | 2 failed) 6ms
   × size > formats 1.0 MB 3ms
   × size > parses "a - b" 1ms
   ✓ size > passes

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 2 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/size.test.ts > size > formats 1.0 MB
AssertionError: expected '1 MB' to be '1.0 MB'

 FAIL  test/size.test.ts > size > parses "a - b"
"""
NODE_TAP = """TAP version 13
# Subtest: formats 1.0 MB
not ok 1 - formats 1.0 MB
ok 2 - passes
not ok 3 - later # TODO not written
not ok 4 - skipped here # SKIP no network
not ok 5 - [fr_FR] 1,0 milliard - x
"""
NODE_SPEC = """✔ passes (0.5ms)
✖ formats 1.0 MB (1.2ms)
✖ failing tests:

✖ formats 1.0 MB (1.2ms)
"""


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        (CARGO, ("tests::adds", "src/lib.rs - add (line 5)")),
        (JEST, ("sum › adds 1.0 MB - sizes", "sum › keeps [brackets] and ünïcode")),
        (JEST_SUITE, ("src/broken.test.js",)),
        (VITEST, ("test/size.test.ts > size > formats 1.0 MB", 'test/size.test.ts > size > parses "a - b"')),
        (NODE_TAP, ("formats 1.0 MB", "[fr_FR] 1,0 milliard - x")),
        (NODE_SPEC, ("formats 1.0 MB",)),
    ],
    ids=["cargo", "jest", "jest-suite", "vitest", "node-tap", "node-spec"],
)
def test_recorded_runner_output_names_each_failure_once(output: str, expected: tuple[str, ...]) -> None:
    assert failed_tests(output) == expected


def test_lines_that_only_look_like_failures_name_no_test() -> None:
    output = "FAILED (failures=2)\nERROR something went wrong\nERROR    root:app.py:3 log line\nok 1 - fine\n"
    assert failed_tests(output) == ()


def test_short_names_ignore_parameters() -> None:
    assert short_name("test_humanize.py::test_naturalsize[1000000-1.0 MB]") == "test_naturalsize"
    assert short_name("test_sizes.Sizes.test_sizes [1.0 MB]") == "test_sizes"
    assert short_name("test/size.test.ts > size > formats 1.0 MB") == "formats 1.0 MB"
    assert short_name("sum › adds") == "adds"


def test_a_capped_failing_list_does_not_claim_an_exact_count() -> None:
    output = "".join(f"FAILED t.py::test_{n}[{n} MB] - assert\n" for n in range(MAX_FAILED_TESTS + 20))
    ids = failed_tests(output)
    assert len(ids) == MAX_FAILED_TESTS and ids[-1] == f"t.py::test_{MAX_FAILED_TESTS - 1}[{MAX_FAILED_TESTS - 1} MB]"
    receipt = CheckReceipt("pytest", "baseline", "failed", 1, 70, {}, ("pytest",), ".", 0.1, None, failed_tests=ids)
    line = receipt.to_output().text.splitlines()[1]
    assert line.endswith(f"more ({MAX_FAILED_TESTS} or more failing)")


def test_localization_of_a_failure_with_a_spaced_id_names_it_and_its_source(humanize_repo: Path) -> None:
    output = _run(humanize_repo, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "test_intword")
    found = localize(humanize_repo, output)
    assert found is not None
    assert found.failed_tests == tuple(PYTEST_IDS[-2:])
    assert [f.name for f in found.functions] == ["intword"]


def test_preexisting_failures_with_spaced_ids_are_told_apart_from_the_fixed_ones(tmp_path: Path) -> None:
    files = {"humanize.py": HUMANIZE, "test_humanize.py": TESTS, "pyproject.toml": "[tool.pytest.ini_options]\n"}
    old = "def intword(value):\n    return str(value)\n"
    turns = [
        call("coder", "architect", task="fix intword in humanize.py"),
        call("edit_file", "coder", path="humanize.py", old=old, new=FIXED_INTWORD, expected_revision=sha(HUMANIZE)),
        call("report_task", "coder", status="done", summary="intword formats millions"),
        say("Fixed intword.", "architect"),
    ]
    run = run_workflow(tmp_path, "fix intword: 1000000 must read 1.0 million", turns, files=files)
    baseline = next(c for c in run.json["checks"] if c["phase"] == "baseline")
    assert sorted(baseline["failed_tests"]) == sorted(PYTEST_IDS)
    verify = next(c for c in run.json["checks"] if c["phase"] == "verify")
    assert sorted(verify["failed_tests"]) == sorted(PYTEST_IDS[:-2])
    assert verify["preexisting_failures"] == verify["failed_tests"]
    assert not [e for e in run.of("workflow.phase") if e.payload["phase"] == "repair"]
