"""Shared set-up for guided-repair tests: small buggy repositories and their real runner output."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from protoagent.testing import make_repo

PRICES = '''"""Prices with tax."""


def with_tax(price, rate):
    """The price after adding tax."""
    return price * (1 - rate)
'''
PRICES_TEST = """from prices import with_tax


def test_with_tax_adds_the_rate():
    assert with_tax(100.0, 0.25) == 125.0
"""
PRICES_REPO = {"prices.py": PRICES, "test_prices.py": PRICES_TEST}
DATES = '''"""Parse ISO calendar dates."""


def parse_date(text):
    """Parse 'YYYY-MM-DD' into (year, month, day)."""
    year, month, day = text.strip().split("-")
    return int(year), int(day), int(month)
'''
DATES_TEST = """import unittest

from dates import parse_date


class ParseDateTest(unittest.TestCase):
    def test_parses_year_month_day(self):
        self.assertEqual(parse_date("2024-03-15"), (2024, 3, 15))
"""
DATE_REPO = {"dates.py": DATES, "test_dates.py": DATES_TEST}
OLD_LINE = "    return price * (1 - rate)"
FIXED_LINE = "    return price * (1 + rate)"


def repo(tmp_path: Path, files: Mapping[str, str] = PRICES_REPO, *, git: bool = False) -> Path:
    return make_repo(tmp_path / "repo", files, git=git)


def pytest_output(root: Path) -> str:
    """What pytest prints for the repository (real runner output)."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False).stdout


def unittest_output(root: Path) -> str:
    argv = [sys.executable, "-m", "unittest", "discover", "-s", ".", "-p", "test*.py", "-q"]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, check=False).stderr
