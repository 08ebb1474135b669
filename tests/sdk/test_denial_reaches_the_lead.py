"""A denial with a reason reaches the lead within the run: it sees the reason as the tool result
and answers once, without tools (no repair, no retry of the denied call)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from protoagent import ApprovalAnswer, MemoryStore, RunOptions, approval_callback, run_task
from protoagent.testing import final_turn, make_repo, tool_turn, write_script


def test_a_denial_reason_reaches_the_lead_and_its_answer_ends_the_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"app.py": "print('hi')\n"})
    turns = [
        tool_turn("execute_command", role="architect", argv=["touch", "made.txt"], env={"PATH": "/usr/bin:/bin"}),
        final_turn("Understood: I will leave the build to make.", role="architect"),
    ]
    script = write_script(tmp_path / "turns.jsonl", turns)
    store = MemoryStore()
    deny = approval_callback(lambda request: ApprovalAnswer.deny("use make instead"))
    options = RunOptions(repo=repo, model=f"scripted:{script}", store=store, answerer=deny, surface="editing")
    report = asyncio.run(run_task("build the app", options))
    events = store.load(report.session_id)
    [denied] = [e for e in events if e.type == "tool.ended" and e.payload["tool"] == "execute_command"]
    assert denied.payload["status"] == "denied" and "use make instead" in denied.payload["output"]
    after = [e for e in events if e.type == "model.requested" and e.agent == "architect" and e.seq > denied.seq]
    assert [e.payload["tool_names"] for e in after] == [[]], "one answer, with no tool to retry the call"
    assert report.summary == "Understood: I will leave the build to make."
    assert [e.type for e in events].count("run.ended") == 1, "the answer came within the same run"
    assert not (repo / "made.txt").exists()
    assert "repair" not in [e.payload["phase"] for e in events if e.type == "workflow.phase"]
