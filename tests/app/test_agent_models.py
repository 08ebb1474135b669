"""An agent file's ``model`` at runtime: a member answers with its own model, a lead's model is
the default the command line's ``--model`` overrides, and a model that cannot be used stops the
run before anything is written. These are the person's own agent files; a repository's
``model`` counts only once trusted (``test_repository_agent_trust``)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tests.app.support import agent_file, call, cli, say, snapshot

from protoagent.agents.service import show_agent, validate_agents
from protoagent.errors import ConfigError
from protoagent.events import Event, MemoryStore
from protoagent.testing import make_repo, write_script
from protoagent.workflow.run import RunOptions, run_task

AGENTS = Path("agents") / "coding"
"""The person's own Coding agent files, under the data home (a repository's need trust first)."""


def _answered_by(events: list[Event]) -> dict[str, set[str]]:
    """Agent → the model specs (scripted: the script's path) its requests went to, from the log."""
    out: dict[str, set[str]] = {}
    for event in events:
        if event.type == "model.requested":
            out.setdefault(event.agent, set()).add(str(event.payload["model"]))
    return out


def _run(repo: Path, home: Path, model: str | None, **fields: Any) -> tuple[str, list[Event]]:
    store = MemoryStore()
    options = RunOptions(
        repo=repo,
        model=model,
        store=store,
        approval="auto",
        surface="editing",
        data_home=home,
        artifacts_root=home / "artifacts",
        **fields,
    )
    report = asyncio.run(run_task("review notes.py for risk", options))
    return report.status, store.load(report.session_id)


def test_a_member_with_its_own_model_answers_its_assignments_with_it(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    lead_script = write_script(
        tmp_path / "lead.jsonl",
        [call("delegate_reviewer", "architect", task="review notes.py"), say("Reviewed: no risk.", "architect")],
    )
    member_script = write_script(tmp_path / "member.jsonl", [say("notes.py holds one constant.", "reviewer")])
    agent_file(home / AGENTS, "reviewer.md", f"description: reviews a change\nmodel: scripted:{member_script}")
    _, events = _run(repo, home, f"scripted:{lead_script}")
    assert _answered_by(events) == {"architect": {str(lead_script)}, "reviewer": {str(member_script)}}
    assert show_agent("coding/reviewer", None, repo, home).model == f"scripted:{member_script}"
    ended = next(e for e in events if e.type == "tool.ended" and e.payload["tool"] == "delegate_reviewer")
    assert "one constant" in ended.payload["output"]


def test_a_builtin_member_override_with_a_model_answers_coder_assignments(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    lead_script = write_script(
        tmp_path / "lead.jsonl",
        [call("coder", "architect", task="say what notes.py holds"), say("Done.", "architect")],
    )
    coder_script = write_script(tmp_path / "coder.jsonl", [say("It holds VALUE.", "coder")])
    agent_file(home / AGENTS, "coder.md", f"model: scripted:{coder_script}")
    _, events = _run(repo, home, f"scripted:{lead_script}")
    assert _answered_by(events)["coder"] == {str(coder_script)}
    assert _answered_by(events)["architect"] == {str(lead_script)}


def test_the_lead_files_model_is_the_default_and_an_explicit_model_wins(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    # A relative path in an agent file's model is read beside that file.
    agent_file(home / AGENTS, "auditor.md", "role: lead\ndescription: audits\nmodel: scripted:auditor.jsonl")
    write_script(home / AGENTS / "auditor.jsonl", [say("Audited with my own model.", "architect")])
    _, events = _run(repo, home, None, agent="auditor")
    assert _answered_by(events) == {"architect": {str(home / AGENTS / "auditor.jsonl")}}
    assert events[0].payload["model"] == "scripted:auditor.jsonl"
    explicit = write_script(tmp_path / "explicit.jsonl", [say("Audited with the run's model.", "architect")])
    _, events = _run(repo, home, f"scripted:{explicit}", agent="auditor")
    assert _answered_by(events) == {"architect": {str(explicit)}}


def test_an_invalid_model_is_a_validate_diagnostic_and_kept_visible(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    bad = agent_file(home / AGENTS, "reviewer.md", "description: reviews\nmodel: nosuch:thing")
    empty = agent_file(home / AGENTS, "counter.md", "description: counts\nmodel: 'openai:'")
    problems = [str(p) for p in validate_agents(repo, home)]
    assert len(problems) == 2
    assert any(p.startswith(f"{bad}: model 'nosuch:thing' names no known provider") for p in problems)
    assert any(p.startswith(f"{empty}: model 'openai:' names no model") for p in problems)
    assert show_agent("coding/reviewer", None, repo, home).model == "nosuch:thing"
    with pytest.raises(ConfigError, match=r"(reviewer|counter)\.md: model '(nosuch:thing|openai:)'"):
        _run(repo, home, "scripted:/never-read.jsonl")


@pytest.mark.slow
def test_a_run_whose_agent_model_cannot_be_used_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    agent_file(home / AGENTS, "reviewer.md", "description: reviews\nmodel: nosuch:thing")
    validated = cli(home, "agents", "validate", "--repo", str(repo))
    assert validated.returncode == 2 and "names no known provider" in validated.stdout + validated.stderr
    before = snapshot(repo)
    script = write_script(tmp_path / "lead.jsonl", [say("never asked", "architect")])
    refused = cli(home, "run", "--repo", str(repo), "--model", f"scripted:{script}", "--json", "review it")
    assert refused.returncode == 2
    error = json.loads(refused.stdout)
    assert error["status"] == "error" and "reviewer.md: model 'nosuch:thing'" in error["error"]
    assert "\n" not in error["error"]
    listed = cli(home, "sessions", "list", "--json")
    assert json.loads(listed.stdout) == []
    assert snapshot(repo) == before
    # A member file whose script is missing is refused the same way, naming that file.
    agent_file(home / AGENTS, "reviewer.md", "description: reviews\nmodel: scripted:missing.jsonl")
    missing = cli(home, "run", "--repo", str(repo), "--model", f"scripted:{script}", "review it")
    assert missing.returncode == 2 and missing.stderr.strip().count("\n") == 0
    assert "reviewer.md: its model 'scripted:missing.jsonl' cannot be used" in missing.stderr
    assert json.loads(cli(home, "sessions", "list", "--json").stdout) == []
