"""The Explorer role a lead's agent file can add, and execute_command redirected to run_check."""

from __future__ import annotations

import asyncio
from pathlib import Path

from protoagent.checks.interpreter import select_interpreter
from protoagent.checks.plan import plan_checks
from protoagent.events import MemoryStore
from protoagent.models.types import ModelRequest
from protoagent.testing import ScriptedModel, make_repo
from protoagent.workflow.run import RunOptions, run_task

from .support import BUGGY_LINE, DATE_REPO, FIXED_LINE, call, fix_turns, run_workflow, say

OBJECTIVE = "fix the failing date parser test"


def _adds_explorer(home: Path) -> None:
    """The person's own Architect file adds ``explorer``, which the default offer leaves out."""
    path = home / "agents" / "coding" / "architect.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\ntools: [explorer]\n---\n", encoding="utf-8")


def test_an_architect_whose_file_adds_explorer_delegates_read_only_source_discovery_to_it(tmp_path: Path) -> None:
    _adds_explorer(tmp_path / "home")
    turns = [
        call("explorer", "architect", task="where is the date parsing done?"),
        call("search_regex", "explorer", pattern="def parse_date"),
        call("edit_file", "explorer", path="dates.py", old="a", new="b", expected_revision="x"),
        say("parse_date is defined in dates.py line 4; it returns (year, day, month).", "explorer"),
        say("Found it.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    architect = next(r for r in run.model.requests if r.agent_role == "architect")
    assert "explorer" in {t.name for t in architect.tools}
    explorer = next(r for r in run.model.requests if r.agent_role == "explorer")
    assert {t.name for t in explorer.tools} == {"read_file", "list_directory", "search_regex", "code_context"}
    assert explorer.system.startswith("You are Explorer: read-only source discovery.")
    edit = run.ended("edit_file")[0].payload
    assert edit["status"] == "rejected" and edit["data"]["kind"] == "unknown_tool", "Explorer cannot write"
    found = run.ended("explorer")[0].payload
    assert found["status"] == "ok" and "dates.py line 4" in found["output"]
    assert [e.payload["role"] for e in run.of("worker.started")] == ["explorer"]


def _small_profile_architect(tmp_path: Path) -> ModelRequest:
    passing = {**DATE_REPO, "dates.py": DATE_REPO["dates.py"].replace(BUGGY_LINE, FIXED_LINE)}
    root = make_repo(tmp_path / "repo", passing)
    model = ScriptedModel.from_lines([say("nothing yet", "architect")])
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=MemoryStore(),
        approval="auto",
        surface="editing",
        provider=model,
        profile="small",
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    asyncio.run(run_task(OBJECTIVE, options))
    return next(r for r in model.requests if r.agent_role == "architect")


def test_the_small_profile_shows_a_card_only_for_a_worker_whose_tool_is_offered(tmp_path: Path) -> None:
    default = _small_profile_architect(tmp_path / "default")
    assert "explorer" not in {t.name for t in default.tools} and "explorer(task)" not in default.system
    assert "coder(task):" in default.system and "run_check(check_id, phase):" in default.system
    _adds_explorer(tmp_path / "added" / "home")
    added = _small_profile_architect(tmp_path / "added")
    assert "explorer" in {t.name for t in added.tools}
    assert "explorer(task): read-only source discovery" in added.system


def test_an_execute_command_that_exactly_matches_a_selected_check_runs_as_run_check(tmp_path: Path) -> None:
    probe = make_repo(tmp_path / "probe", DATE_REPO, git=False)
    check = plan_checks(probe, select_interpreter(probe)).get("unittest")
    assert check is not None
    turns = [
        call("coder", "architect", task="fix the swapped return in dates.py"),
        *fix_turns(),
        call("execute_command", "architect", argv=list(check.argv)),
        say("Fixed; the check passes.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    redirected = run.ended("execute_command")[0].payload
    assert redirected["output"].startswith("redirected to run_check(check_id='unittest', phase='verify')")
    assert "check unittest verify: passed" in redirected["output"]
    assert (redirected["data"]["redirected_to"], redirected["data"]["check_id"]) == ("run_check", "unittest")
    checks = run.ended("run_check")
    assert [(e.agent, e.payload["data"]["phase"]) for e in checks] == [("verifier", "baseline"), ("verifier", "verify")]
    assert checks[1].payload["call_id"] == redirected["data"]["run_check_call_id"]
    assert not [e for e in run.of("approval.requested") if e.payload["tool"] == "execute_command"]
    assert run.json["verified"] is True and run.json["status"] == "completed"


def test_an_execute_command_that_is_not_a_selected_check_runs_as_itself(tmp_path: Path) -> None:
    turns = [
        call("execute_command", "architect", argv=["ls"], env={"PATH": "/usr/bin:/bin"}),
        say("listed", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    ended = run.ended("execute_command")[0].payload
    assert ended["status"] == "ok" and "redirected" not in ended["output"] and "dates.py" in ended["output"]
    assert [e.payload["data"]["phase"] for e in run.ended("run_check")] == ["baseline"]
