""" "Allow for this session" on a check covers the same check (same argv, cwd, environment) in
its next phase: asked once at baseline, not again at verify."""

from __future__ import annotations

import asyncio
import hashlib
from pathlib import Path

from protoagent import ApprovalAnswer, MemoryStore, RunOptions, approval_callback, run_task
from protoagent.testing import final_turn, make_repo, write_script
from protoagent.tools.approvals import ApprovalRequest

BUGGY = "def parse_date(text):\n    year, month, day = text.split('-')\n    return int(year), int(day), int(month)\n"
TESTS = (
    "import unittest\n\nfrom dates import parse_date\n\n\nclass T(unittest.TestCase):\n"
    "    def test_parse(self):\n        self.assertEqual(parse_date('2024-03-15'), (2024, 3, 15))\n"
)


def test_allow_for_this_session_at_baseline_covers_the_same_check_at_verify(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"dates.py": BUGGY, "test_dates.py": TESTS})
    old, new = "int(day), int(month)", "int(month), int(day)"
    edit = {"path": "dates.py", "old": old, "new": new, "expected_revision": hashlib.sha256(BUGGY.encode()).hexdigest()}
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            {"role": "architect", "tool_calls": [{"name": "coder", "arguments": {"task": "fix dates.py"}}]},
            {"role": "coder", "tool_calls": [{"name": "edit_file", "arguments": edit}]},
            {
                "role": "coder",
                "tool_calls": [{"name": "report_task", "arguments": {"status": "done", "summary": "ok"}}],
            },
            final_turn("fixed", role="coder"),
            final_turn("Fixed parse_date.", role="architect"),
        ],
    )
    asked: list[ApprovalRequest] = []

    def answer(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer.for_session() if request.tool == "run_check" else ApprovalAnswer.once()

    store = MemoryStore()
    options = RunOptions(
        repo=repo, model=f"scripted:{script}", store=store, answerer=approval_callback(answer), surface="editing"
    )
    report = asyncio.run(run_task("fix the date parser", options))
    checks = [e for e in store.load(report.session_id) if e.type == "tool.ended" and e.payload["tool"] == "run_check"]
    phases = [e.payload["data"].get("phase") for e in checks]
    assert "baseline" in phases and "verify" in phases, phases
    assert [r.tool for r in asked].count("run_check") == 1, [r.preview.splitlines()[0] for r in asked]
    decided = [
        e for e in store.load(report.session_id) if e.type == "approval.decided" and e.payload["tool"] == "run_check"
    ]
    assert [e.payload["source"] for e in decided] == ["answerer", "rule"]
    assert report.evidence.verified
