"""Guided repair with the real embedded model (SmolLM2-135M) on one one-line bug."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path

import pytest

from protoagent.events import MemoryStore
from protoagent.workflow.run import RunOptions, run_task

from .support import repo

pytestmark = [
    pytest.mark.local_model,
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("llama_cpp") is None,
        reason="llama-cpp-python is not installed (pip install 'protoagent[local]')",
    ),
]

GRADES = '''"""Exam grades."""

PASS_MARK = 50


def passed(score):
    """A score at or above the pass mark passes."""
    return score > PASS_MARK
'''
GRADES_TEST = """import unittest

from grades import passed


class PassedTest(unittest.TestCase):
    def test_pass_mark_itself_passes(self):
        self.assertIs(passed(50), True)

    def test_below_fails(self):
        self.assertIs(passed(49), False)
"""


def test_the_embedded_model_repairs_a_wrong_comparison_and_the_checks_verify_it(tmp_path: Path) -> None:
    root = repo(tmp_path, {"grades.py": GRADES, "test_grades.py": GRADES_TEST}, git=True)
    store = MemoryStore()
    options = RunOptions(
        repo=root,
        model="local",
        store=store,
        approval="auto",
        surface="editing",
        profile="small",
        tester=False,
        max_model_calls=1,
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    report = asyncio.run(run_task("fix the failing test", options))
    events = store.load(report.session_id)
    tried = [e for e in events if e.type == "repair.candidate"]
    assert tried and tried[-1].payload["passed"] is True
    assert report.evidence.verified and report.evidence.criteria_supported
    assert "return score >= PASS_MARK" in (root / "grades.py").read_text()
