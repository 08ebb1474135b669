"""Shared set-up for workflow tests: a temporary repository, a per-role script, one run."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protoagent.events import Event, MemoryStore
from protoagent.models.profile import ProfileRequest
from protoagent.models.registry import ModelConfig
from protoagent.models.types import ModelRequest
from protoagent.testing import ScriptedModel, make_repo
from protoagent.tools.approvals import Answerer, Policy
from protoagent.workflow.contract import Surface
from protoagent.workflow.run import RunOptions, RunReport, run_task

BUGGY = '''"""Parse ISO calendar dates."""


def parse_date(text):
    year, month, day = text.strip().split("-")
    return int(year), int(day), int(month)
'''
FIXED_LINE = "    return int(year), int(month), int(day)\n"
BUGGY_LINE = "    return int(year), int(day), int(month)\n"
TESTS = """import unittest

from dates import parse_date


class ParseDateTest(unittest.TestCase):
    def test_parses_year_month_day(self):
        self.assertEqual(parse_date("2024-03-15"), (2024, 3, 15))
"""
DATE_REPO = {"dates.py": BUGGY, "test_dates.py": TESTS}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def call(name: str, role: str, call_id: str = "", /, **arguments: Any) -> dict[str, Any]:
    """One scripted turn of ``role`` calling ``name``; ``call_id`` fixes the call's id."""
    return {"role": role, "tool_calls": [{"name": name, "arguments": arguments, "id": call_id}]}


def say(text: str, role: str) -> dict[str, Any]:
    return {"role": role, "text": text}


def fix_turns() -> list[dict[str, Any]]:
    """Coder reads dates.py and fixes the swapped return."""
    return [
        call("read_file", "coder", path="dates.py"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY)),
        call("report_task", "coder", status="done", summary="swapped month and day back"),
    ]


class Run:
    """One finished run: its report, its events and the scripted model it used."""

    def __init__(self, report: RunReport, events: list[Event], model: ScriptedModel, root: Path) -> None:
        self.report = report
        self.events = events
        self.model = model
        self.root = root

    @property
    def json(self) -> dict[str, Any]:
        return self.report.to_json()

    def types(self, agent: str | None = None) -> list[str]:
        return [e.type for e in self.events if agent is None or e.agent == agent]

    def ended(self, tool: str) -> list[Event]:
        return [e for e in self.events if e.type == "tool.ended" and e.payload["tool"] == tool]

    def of(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == kind]

    def requests(self, agent: str) -> list[ModelRequest]:
        """Every request the scripted model received from ``agent``, in order."""
        return [r for r in self.model.requests if r.agent_role == agent]


def run_workflow(
    tmp_path: Path,
    objective: str,
    turns: Sequence[Mapping[str, Any]],
    *,
    files: Mapping[str, str] = DATE_REPO,
    surface: Surface | None = None,
    approval: Policy = "auto",
    tester: bool = True,
    scout: bool = False,
    mcp: bool = False,
    window: int | None = None,
    profile: ProfileRequest = "auto",
    answerer: Answerer | None = None,
) -> Run:
    """One run on a temporary repository; ``window`` is the model's known context window and
    ``answerer`` the person asked for approvals (none: nobody is there)."""
    root = make_repo(tmp_path / "repo", files)
    model = ScriptedModel.from_lines(turns)
    store = MemoryStore()
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=store,
        approval=approval,
        surface=surface,
        provider=model,
        tester=tester,
        scout=scout,
        mcp=mcp,
        profile=profile,
        answerer=answerer,
        model_config=ModelConfig(context_window=window),
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    report = asyncio.run(run_task(objective, options))
    return Run(report, store.load(report.session_id), model, root)
