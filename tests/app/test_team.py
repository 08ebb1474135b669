"""Leads and members: delegation generated from member files, never another lead's members."""

from __future__ import annotations

from pathlib import Path

from tests.app.support import agent_file, call, say, scripted_run

from protoagent.agents.service import show_agent
from protoagent.models.types import ModelRequest
from protoagent.testing import make_repo

FILES = {"notes.py": "VALUE = 1\n"}


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", FILES)
    agents = repo / ".protoagent" / "agents" / "coding"
    agent_file(agents, "reviewer.md", "description: reviews a change for risk\ntools: [read_file]", "Be terse.")
    agent_file(agents, "auditor.md", "role: lead\ndescription: audits the repository")
    agent_file(agents, "counter.md", "lead: auditor\ndescription: counts lines for the auditor")
    return repo


def _tools(model_requests: list[ModelRequest], role: str) -> set[str]:
    return {t.name for t in next(r for r in model_requests if r.agent_role == role).tools}


def test_a_member_file_gives_the_lead_a_delegate_without_a_code_change(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    turns = [
        call("delegate_reviewer", "architect", task="review notes.py"),
        call("read_file", "reviewer", path="notes.py"),
        say("notes.py holds one constant; no risk.", "reviewer"),
        say("Reviewed: no risk found.", "architect"),
    ]
    report, events, model, _ = scripted_run("review notes.py for risk", turns, repo=repo, home=home, surface="editing")
    architect_tools = _tools(model.requests, "architect")
    assert "delegate_reviewer" in architect_tools
    assert "delegate_counter" not in architect_tools  # the auditor's member is not offered
    assert {"coder", "tester"} <= architect_tools
    ended = [e for e in events if e.type == "tool.ended" and e.payload["tool"] == "delegate_reviewer"]
    assert ended and ended[0].payload["status"] == "ok"
    assert "no risk" in ended[0].payload["output"]
    reviewer_request = next(r for r in model.requests if r.agent_role == "reviewer")
    effective = show_agent("coding/reviewer", None, repo, home)
    assert {t.name for t in reviewer_request.tools} == set(effective.tools)
    assert reviewer_request.system.startswith(effective.prompt)
    assert report.lead == "architect" and report.mode == "coding"


def test_a_second_lead_gets_only_its_own_members(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    turns = [
        call("delegate_counter", "architect", task="count lines of notes.py"),
        say("one line", "counter"),
        say("notes.py has one line.", "architect"),
    ]
    report, events, model, _ = scripted_run(
        "count the lines", turns, repo=repo, home=home, surface="editing", agent="auditor"
    )
    offered = _tools(model.requests, "architect")
    assert "delegate_counter" in offered
    assert not offered & {"delegate_reviewer", "coder", "tester"}
    assert report.lead == "auditor"
    created = events[0].payload
    assert (created["mode"], created["lead"]) == ("coding", "auditor")


def test_a_disabled_member_is_not_offered(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_text('{"agents": {"coding/reviewer": false, "tester": false}}')
    turns = [say("nothing to do", "architect")]
    _, _, model, _ = scripted_run("look at notes.py and fix it", turns, repo=repo, home=home, surface="editing")
    offered = _tools(model.requests, "architect")
    assert "delegate_reviewer" not in offered and "tester" not in offered and "coder" in offered


def test_a_builtin_member_override_adds_tools_and_prompt_to_the_running_worker(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", FILES), tmp_path / "home"
    agents = repo / ".protoagent" / "agents" / "coding"
    agent_file(agents, "coder.md", "tools: [list_directory]", "Always keep a trailing newline.")
    turns = [
        call("coder", "architect", task="check notes.py"),
        call("report_task", "coder", status="done", summary="nothing to change"),
        say("done", "coder"),
        say("Nothing needed changing.", "architect"),
    ]
    scripted = scripted_run("fix notes.py if needed", turns, repo=repo, home=home, surface="editing")
    coder_request = next(r for r in scripted[2].requests if r.agent_role == "coder")
    effective = show_agent("coding/coder", None, repo, home)
    assert [t.name for t in coder_request.tools] == list(effective.tools)
    assert "list_directory" in effective.tools
    assert "Always keep a trailing newline." in coder_request.system


def test_small_profile_worker_cards_come_from_the_member_definitions(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    turns = [say("nothing to do", "architect")]
    scripted = scripted_run(
        "look at notes.py and fix it", turns, repo=repo, home=home, surface="editing", profile="small"
    )
    system = next(r for r in scripted[2].requests if r.agent_role == "architect").system
    assert "delegate_reviewer(task): reviews a change for risk" in system
    assert "coder(task): applies edits for one focused assignment now" in system
    assert "counter" not in system
