"""What a read-only worker concludes (its own messages and its report) reaches its lead, bounded
and labelled as advice; advice that arrives as verification closes the run stays in the report."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protoagent.models.openai_compat import build_request
from protoagent.models.types import ModelRequest
from protoagent.workflow.reports import ADVICE_CHARS

from .support import BUGGY, BUGGY_LINE, DATE_REPO, FIXED_LINE, call, run_workflow, say, sha

OBJECTIVE = "fix the failing date parser test"
CASES = "\n".join(
    f"{n}. parse_date({text!r}) == {expected}"
    for n, (text, expected) in enumerate(
        [
            ("2024-03-15", "(2024, 3, 15)"),
            (" 2024-03-15 ", "(2024, 3, 15)"),
            ("2024-3-5", "(2024, 3, 5)"),
            ("1999-12-31", "(1999, 12, 31)"),
            ("2000-01-01", "(2000, 1, 1)"),
            ("2024-02-29", "(2024, 2, 29)"),
            ("0001-01-01", "(1, 1, 1)"),
        ],
        start=1,
    )
)


def _shown(request: ModelRequest) -> str:
    body = build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object")
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def _said_and_reported(role: str, text: str, summary: str) -> dict[str, Any]:
    report = {"name": "report_task", "arguments": {"status": "done", "summary": summary}}
    return {"role": role, "text": text, "tool_calls": [report]}


def test_a_testers_cases_written_beside_its_report_reach_the_architect(tmp_path: Path) -> None:
    turns = [
        call("tester", "architect", task="propose regression cases for parse_date"),
        _said_and_reported("tester", "Cases:\n" + CASES, "7 cases, listed above"),
        say("Noted the cases.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    seen = _shown(run.requests("architect")[-1])
    assert "advice, not evidence:\ntester wrote:\nCases:\n" + CASES in seen
    assert "tester reported done:\n7 cases, listed above" in seen


def test_a_workers_messages_reach_the_lead_bounded_with_the_cut_said(tmp_path: Path) -> None:
    long_text = "".join(f"case {i}: parse_date('2024-01-{i % 28 + 1:02d}') keeps the day\n" for i in range(400))
    turns = [
        call("tester", "architect", task="propose regression cases for parse_date"),
        _said_and_reported("tester", long_text, "many cases"),
        say("Noted.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    result = str(run.ended("tester")[0].payload["output"])
    limit = ADVICE_CHARS["standard"]
    assert f"[... {len(long_text.strip()) - limit} characters of its earlier messages cut ...]" in result
    assert long_text.strip()[-limit:] in result  # the most recent part is kept whole
    assert len(result) < limit + 300


REVIEWER = "---\ndescription: reviews a change for risk\ntools: [read_file]\n---\nBe terse.\n"
ADVICE = "Risk: nothing checks the month range; add a case for parse_date('2024-13-01') raising ValueError."


def test_a_reviewers_advice_in_the_same_turn_as_a_passing_verify_stays_in_the_report(tmp_path: Path) -> None:
    batch = [
        {"name": "coder", "arguments": {"task": "fix parse_date's swapped return"}},
        {"name": "delegate_reviewer", "arguments": {"task": "review the change to dates.py"}},
        {"name": "run_check", "arguments": {"check_id": "unittest", "phase": "verify"}},
    ]
    edit = {"path": "dates.py", "old": BUGGY_LINE, "new": FIXED_LINE, "expected_revision": sha(BUGGY)}
    turns = [
        {"role": "architect", "tool_calls": batch},
        {"role": "coder", "tool_calls": [{"name": "edit_file", "arguments": edit}]},
        call("report_task", "coder", status="done", summary="swapped month and day back"),
        say(ADVICE, "reviewer"),
    ]
    files = {**DATE_REPO, ".protoagent/agents/coding/reviewer.md": REVIEWER}
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=files)
    assert run.json["status"] == "completed" and run.json["verified"] is True
    assert len(run.requests("architect")) == 1  # verification closed the run: no request read the advice
    summary = run.json["summary"]
    assert "Advice from reviewer that the lead had not read when verification closed the run (not evidence):" in summary
    assert ADVICE in summary
