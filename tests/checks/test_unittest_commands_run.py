"""The unittest commands discovery chooses really reach the tests (run with the real interpreter)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from protoagent.checks import discover_checks

from .support import PYTHON, write_repo

CASE = (
    "import unittest\n\nfrom dates import parse\n\n\n"
    "class DatesTest(unittest.TestCase):\n    def test_parse(self):\n        self.assertEqual(parse(), 1)\n"
)
LAYOUTS = {
    "root files": {"test_dates.py": CASE},
    "one root tests.py module": {"tests.py": CASE, "setup.py": "from setuptools import setup\nsetup()\n"},
    "tests package moved from the root": {"tests/__init__.py": "", "tests/test_dates.py": CASE},
    "plain tests directory": {"tests/test_dates.py": CASE},
    "test package with subpackage": {
        "test/__init__.py": "",
        "test/unit/__init__.py": "",
        "test/unit/test_dates.py": CASE,
    },
    "package below a plain directory": {"core/tests/__init__.py": "", "core/tests/test_dates.py": CASE},
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_discovered_unittest_command_runs_the_tests(tmp_path: Path, layout: str) -> None:
    write_repo(tmp_path, {"dates.py": "def parse():\n    return 1\n", **LAYOUTS[layout]})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("unittest",)
    check = plan.checks[0]
    env = {"PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        check.argv, cwd=tmp_path / check.cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "Ran 1 test" in result.stderr
