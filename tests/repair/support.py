"""Shared set-up for guided-repair tests: small buggy repositories and their real runner output."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protoagent.events import Event, MemoryStore
from protoagent.testing import ScriptedModel, make_repo
from protoagent.workflow.contract import Surface
from protoagent.workflow.run import RunOptions, RunReport, run_task

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


def small_run(
    tmp_path: Path, objective: str, turns: Sequence[Mapping[str, Any]], surface: Surface | None = "editing"
) -> tuple[RunReport, list[Event], Path]:
    """A small-profile run of ``objective`` on the date repository, scripted ``turns`` standing
    where the model stands: its report, its log and the repository."""
    root = repo(tmp_path, DATE_REPO, git=True)
    store = MemoryStore()
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=store,
        approval="auto",
        surface=surface,
        provider=ScriptedModel.from_lines(turns),
        profile="small",
        tester=False,
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    report = asyncio.run(run_task(objective, options))
    return report, store.load(report.session_id), root


def ended(events: Sequence[Event], tool: str) -> list[Event]:
    return [e for e in events if e.type == "tool.ended" and e.payload["tool"] == tool]
