"""Fewer, smaller requests for a capable model: the failing baseline shows the Architect the
source involved, that source reaches the Coder as already read, and a passing final
verification ends the run without a closing-summary request."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from protoagent.events import Event, MemoryStore
from protoagent.models.openai_compat import build_request
from protoagent.models.types import ModelRequest
from protoagent.testing import ScriptedModel, make_repo
from protoagent.workflow.localized import LOCALIZED_BUDGETS, localized_spans
from protoagent.workflow.run import RunOptions, run_task
from protoagent.workflow.source_spans import SpanBudget

from .support import BUGGY, BUGGY_LINE, DATE_REPO, FIXED_LINE, Run, call, run_workflow, say, sha

OBJECTIVE = "fix the failing date parser test"
VERIFY = {"check_id": "unittest", "phase": "verify"}


def _batch(role: str, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"role": role, "tool_calls": [{"name": n, "arguments": a} for n, a in calls]}


def _edit_and_report(summary: str = "swapped month and day back", status: str = "done") -> dict[str, Any]:
    """Coder edits from the carried span (no read) and reports in one turn."""
    edit = {"path": "dates.py", "old": BUGGY_LINE, "new": FIXED_LINE, "expected_revision": sha(BUGGY)}
    return _batch("coder", ("edit_file", edit), ("report_task", {"status": status, "summary": summary}))


def _shown(request: ModelRequest) -> str:
    """What an OpenAI-compatible endpoint would receive as the request's messages."""
    body = build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object")
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def _requests(run: Run) -> list[str]:
    return [r.agent_role for r in run.model.requests]


def _reads(run: Run) -> list[Event]:
    return run.ended("read_file") + run.ended("search_regex")


def test_failing_baseline_shows_the_architect_the_source_of_the_functions_involved(tmp_path: Path) -> None:
    turns = [_batch("architect", ("coder", {"task": "fix parse_date's swapped return"}), ("run_check", VERIFY))]
    run = run_workflow(tmp_path, OBJECTIVE, [*turns, _edit_and_report()])
    first = _shown(run.model.requests[0])
    failing = first.index("failing tests: test_dates.ParseDateTest.test_parses_year_month_day")
    source = first.index(f"--- dates.py lines 4-6 of 6; revision {sha(BUGGY)}")
    assert failing < source
    assert "   6|     return int(year), int(day), int(month)" in first[source:]
    (localized,) = run.of("source.localized")
    assert localized.agent == "architect" and localized.payload["spans"][0]["revision"] == sha(BUGGY)
    assert not _reads(run), "neither the Architect nor the Coder needed a read"


def test_small_profile_architect_also_gets_the_localized_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_GUIDED_REPAIR", "off")
    root = make_repo(tmp_path / "repo", DATE_REPO)
    model = ScriptedModel.from_lines([say("I would delegate the fix.", "architect")])
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=MemoryStore(),
        approval="auto",
        provider=model,
        profile="small",
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    asyncio.run(run_task(OBJECTIVE, options))
    first = _shown(model.requests[0])
    assert model.requests[0].action_mode == "json", "the small profile ran"
    assert f"dates.py lines 4-6 of 6; revision {sha(BUGGY)}" in first
    assert "   6|     return int(year), int(day), int(month)" in first


def test_localized_source_stays_within_its_line_budget_keeping_whole_functions(tmp_path: Path) -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(28))
    module = "".join(
        f"def {name}(v):\n{body}    return {callee}\n\n\n"
        for name, callee in (("outer", "inner(v) + other(v)"), ("inner", "v"), ("other", "v"))
    )
    test = "import unittest\n\nfrom calc import outer\n\n\nclass T(unittest.TestCase):\n"
    test += "    def test_outer(self):\n        self.assertEqual(outer(1), 3)\n"
    root = make_repo(tmp_path / "repo", {"calc.py": module, "test_calc.py": test})
    ran = subprocess.run(
        [sys.executable, "-B", "-m", "unittest", "test_calc"], cwd=root, capture_output=True, text=True, check=False
    )
    assert ran.returncode == 1
    budget = LOCALIZED_BUDGETS["standard"]
    spans = localized_spans(root, [ran.stderr], budget)
    assert [s.start_line for s in spans] == [1, 33], "two 30-line functions fit 80 lines; the third is left out"
    assert sum(s.end_line - s.start_line + 1 for s in spans) <= budget.lines
    assert sum(len(s.content) for s in spans) <= budget.chars
    last_lines = [s.content.splitlines()[-1] for s in spans]
    assert last_lines[0].endswith("return inner(v) + other(v)") and last_lines[1].endswith("return v")
    assert localized_spans(root, [ran.stderr], SpanBudget(lines=80, chars=500)) == ()


def test_coder_assignment_carries_the_localized_source_with_its_revision(tmp_path: Path) -> None:
    turns = [_batch("architect", ("coder", {"task": "fix parse_date's swapped return"}), ("run_check", VERIFY))]
    run = run_workflow(tmp_path, OBJECTIVE, [*turns, _edit_and_report()])
    assert _requests(run) == ["architect", "coder"]
    coder = _shown(run.model.requests[1])
    assert "Source already read in this task, unchanged since" in coder
    assert f"--- dates.py lines 4-6 of 6; revision {sha(BUGGY)}" in coder
    assert run.ended("edit_file")[0].payload["status"] == "ok"


def test_a_localized_span_whose_file_changed_is_left_out_of_the_next_assignment(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix parse_date's swapped return"),
        _edit_and_report(),
        call("coder", "architect", task="check the docstring of parse_date"),
        say("The docstring is fine.", "coder"),
        say("Fixed parse_date.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    second = _shown([r for r in run.model.requests if r.agent_role == "coder"][1])
    assert "Left out because the file changed since it was read: dates.py" in second
    assert f"revision {sha(BUGGY)}" not in second


def test_passing_final_verification_ends_the_run_without_another_architect_request(tmp_path: Path) -> None:
    turns = [
        _batch("architect", ("coder", {"task": "fix parse_date's swapped return"}), ("run_check", VERIFY)),
        _edit_and_report(),
        say("Fixed parse_date; the check passes.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert _requests(run) == ["architect", "coder"] and run.model.remaining == 1
    assert [e.payload["reason"] for e in run.of("workflow.returned")] == ["final_verification_passed"]
    assert run.json["status"] == "completed" and run.json["verified"] is True
    assert run.report.summary == (
        "Final verification passed: unittest passed (1 test). Changed: dates.py (+1 -1). "
        "Coder reported done: swapped month and day back"
    )
    assert json.loads(json.dumps(run.json))["summary"] == run.report.summary


def test_calls_after_the_passing_verify_in_the_same_turn_still_run_and_are_named(tmp_path: Path) -> None:
    turns = [
        _batch(
            "architect",
            ("coder", {"task": "fix parse_date's swapped return"}),
            ("run_check", VERIFY),
            ("read_file", {"path": "dates.py"}),
            ("coder", {"task": "also add a comment"}),
        ),
        _edit_and_report(),
        say("Done.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert _requests(run) == ["architect", "coder"]
    assert run.ended("read_file")[0].payload["status"] == "ok"
    assert run.ended("coder")[-1].payload["data"]["kind"] == "edit_phase_closed"
    assert run.report.summary.endswith("Also run after verification: read_file (ok), coder (rejected).")


def test_an_unresolved_worker_report_keeps_the_architect_in_the_loop_after_a_passing_verify(tmp_path: Path) -> None:
    turns = [
        _batch("architect", ("coder", {"task": "fix parse_date's swapped return"}), ("run_check", VERIFY)),
        _edit_and_report("fixed the return; the docstring needs another file", status="needs_context"),
        say("The fix is verified; the docstring needs more context.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert _requests(run) == ["architect", "coder", "architect"]
    assert not run.of("workflow.returned")
    assert run.report.summary == "The fix is verified; the docstring needs more context."
