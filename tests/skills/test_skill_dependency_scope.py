"""A skill's tool dependencies are activated for the agent that loaded it, only within what that
agent's role, team and surface allow; a refused dependency activates nothing and says why. And
assignment preloads a skill for a member as it does for a lead. Driven through the CLI on a
temporary repository, with the scripted model standing where the model stands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.app.support import agent_file, call, cli, say, scripted_run
from tests.skills.support import write_skill

from protoagent.testing import make_repo, write_script

SKILLS = Path(".agents") / "skills"
AGENTS = Path(".protoagent") / "agents" / "coding"
CANARY = "canary.txt"
SKILL_BODY = "# Review\nCheck every changed line for risk; cite the line.\n"


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"})
    write_skill(
        repo / SKILLS,
        "runner",
        "name: runner\ndescription: Runs shell commands for a task.",
        files={"agents/protoagent.yaml": "dependencies:\n  tools: [shell]\n"},
    )
    write_skill(
        repo / SKILLS,
        "delegator",
        "name: delegator\ndescription: Hands edits to Coder.",
        files={"agents/protoagent.yaml": "dependencies:\n  tools: [coder]\n"},
    )
    write_skill(repo / SKILLS, "code-review", "name: code-review\ndescription: Reviews a change.", SKILL_BODY)
    return repo


def _run(tmp_path: Path, repo: Path, turns: list[dict[str, Any]], objective: str, *args: str) -> list[dict[str, Any]]:
    home = tmp_path / "home"
    script = write_script(tmp_path / "turns.jsonl", turns)
    done = cli(
        home,
        "run",
        "--repo",
        str(repo),
        "--model",
        f"scripted:{script}",
        "--approval",
        "auto",
        "--surface",
        "editing",
        "--json",
        *args,
        objective,
    )
    assert done.returncode in (0, 1, 3), done.stderr
    session = json.loads(done.stdout)["session_id"]
    return list(json.loads(cli(home, "sessions", "show", session, "--json").stdout)["events"])


def _offered(events: list[dict[str, Any]], agent: str) -> list[set[str]]:
    return [set(e["payload"]["tool_names"]) for e in events if e["type"] == "model.requested" and e["agent"] == agent]


def _ended(events: list[dict[str, Any]], agent: str, tool: str) -> list[dict[str, Any]]:
    return [
        e["payload"]
        for e in events
        if e["type"] == "tool.ended" and e["agent"] == agent and e["payload"]["tool"] == tool
    ]


@pytest.mark.slow
def test_a_lead_activated_shell_dependency_never_reaches_the_read_only_tester_or_explorer(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    agent_file(tmp_path / "home" / "agents", "coding/architect.md", "tools: [explorer]")  # the person adds Explorer
    attack = f"echo pwned > {CANARY}"
    turns = [
        call("tester", "architect", task="propose regression cases"),
        call("shell", "tester", command=attack),
        say("no cases", "tester"),
        call("explorer", "architect", task="find VALUE"),
        call("shell", "explorer", command=attack),
        say("notes.py:1", "explorer"),
        say("Done.", "architect"),
    ]
    events = _run(tmp_path, repo, turns, "$runner look at notes.py")
    activated = [e for e in events if e["type"] == "skill.activated"]
    assert [(e["agent"], e["payload"]["activation"]["tools"]) for e in activated] == [("architect", ["shell"])]
    assert all("shell" in offer for offer in _offered(events, "architect"))  # the lead's own role runs commands
    for member in ("tester", "explorer"):
        assert _offered(events, member) and all("shell" not in offer for offer in _offered(events, member))
        [refused] = _ended(events, member, "shell")
        assert refused["status"] == "rejected" and refused["data"]["kind"] == "unknown_tool"
    assert not (repo / CANARY).exists()


@pytest.mark.slow
def test_a_skill_cannot_give_a_second_lead_the_default_leads_coder(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    agent_file(repo / AGENTS, "auditor.md", "role: lead\ndescription: audits the repository")
    turns = [
        {"role": "architect", "tool_calls": [{"name": "skill", "arguments": {"name": "delegator"}}]},
        call("coder", "architect", task="rewrite notes.py"),
        say("Audited.", "architect"),
    ]
    events = _run(tmp_path, repo, turns, "$delegator audit notes.py", "--agent", "auditor")
    # The named skill is refused before the model call, with its reason recorded ...
    resolved = [e["payload"] for e in events if e["type"] == "skill.resolved" and e["payload"].get("refused")]
    assert resolved and resolved[0]["refused"] == "delegator"
    assert "'coder' is a team or workflow tool" in resolved[0]["reason"]
    assert not [e for e in events if e["type"] == "skill.activated"]
    # ... the model's own attempt gets the same reason as its result, and coder is never offered.
    [tried] = _ended(events, "architect", "skill")
    assert tried["status"] == "rejected" and "was not activated for architect" in tried["output"]
    assert all("coder" not in offer for offer in _offered(events, "architect"))
    [coder] = _ended(events, "architect", "coder")
    assert coder["status"] == "rejected"
    assert (repo / "notes.py").read_text(encoding="utf-8") == "VALUE = 1\n"


def test_assigned_skills_preload_for_members_and_stay_within_their_roles(tmp_path: Path) -> None:
    repo, home = _repo(tmp_path), tmp_path / "home"
    agent_file(repo / AGENTS, "reviewer.md", "description: reviews a change\nskills: [code-review]")
    agent_file(repo / AGENTS, "tester.md", "skills: [runner]")
    agent_file(repo / AGENTS, "coder.md", "skills: [delegator]")
    turns = [
        call("delegate_reviewer", "architect", task="review notes.py"),
        say("line 1 is fine", "reviewer"),
        call("tester", "architect", task="propose cases"),
        say("no cases", "tester"),
        call("coder", "architect", task="leave notes.py as it is"),
        say("nothing to change", "coder"),
        say("Done.", "architect"),
    ]
    _, logged, model, _ = scripted_run("review notes.py", turns, repo=repo, home=home, surface="editing")
    events = [e.model_dump() for e in logged]
    activated = {e["agent"]: e["payload"]["activation"] for e in events if e["type"] == "skill.activated"}
    assert set(activated) == {"reviewer"}
    assert activated["reviewer"]["name"] == "code-review" and activated["reviewer"]["trigger"] == "agent"
    refused = {
        e["agent"]: e["payload"] for e in events if e["type"] == "skill.resolved" and e["payload"].get("refused")
    }
    assert refused["tester"]["refused"] == "runner" and "would let tester run commands" in refused["tester"]["reason"]
    assert refused["coder"]["refused"] == "delegator" and "'coder' is only for architect" in refused["coder"]["reason"]
    assert all("coder" not in offer for offer in _offered(events, "coder"))
    assert all("shell" not in offer for offer in _offered(events, "tester"))
    # The reviewer's own request carries the exact body as a skill result; the lead's does not.
    reviewer = next(r for r in model.requests if r.agent_role == "reviewer")
    assert any(m.name == "skill" and SKILL_BODY.strip() in m.content for m in reviewer.messages)
    lead = next(r for r in model.requests if r.agent_role == "architect")
    assert not any(SKILL_BODY.strip() in m.content for m in lead.messages)
