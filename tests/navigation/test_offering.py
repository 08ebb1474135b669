"""code_context is offered to the Coding roles that read source, runs without approval, and its
index lives in the run's data home."""

from __future__ import annotations

from pathlib import Path

from tests.workflow.support import call, run_workflow, say

from protoagent.agents.profiles import profile_for
from protoagent.navigation.index import cache_file


def test_the_architect_and_the_tester_are_offered_code_context_and_the_coder_is_not(tmp_path: Path) -> None:
    turns = [
        call("code_context", "architect", symbol="parse_date", operation="callers"),
        call("tester", "architect", task="which checks cover parse_date?"),
        call("code_context", "tester", symbol="parse_date", operation="references"),
        call("report_task", "tester", status="done", summary="test_dates.py covers it"),
        say("Covered by test_dates.py.", "architect"),
    ]
    run = run_workflow(tmp_path, "fix the failing date parser test", turns, surface="editing")
    offered = {r.agent_role: {t.name for t in r.tools} for r in run.model.requests}
    assert "code_context" in offered["architect"] and "code_context" in offered["tester"]
    ended = run.ended("code_context")
    assert [e.agent for e in ended] == ["architect", "tester"] and all(e.payload["status"] == "ok" for e in ended)
    assert "test_dates.py:8 " in ended[1].payload["output"]
    assert not [e for e in run.events if e.type == "approval.requested" and e.payload["tool"] == "code_context"]
    assert cache_file(tmp_path / "home", run.root.resolve()).is_file()
    coder = profile_for("coding", "coder")
    assert coder is not None and "code_context" not in coder.tools  # Coder edits what it was pointed at
