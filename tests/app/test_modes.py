"""Work and Coding modes: the session workspace, the default mode and the Work team."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.app.support import call, cli, say, scripted_run

from protoagent.agents.modes import default_mode
from protoagent.errors import ConfigError
from protoagent.testing import make_repo


def test_default_mode_is_coding_in_a_repository_and_work_elsewhere(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    (repo / "pkg").mkdir()
    plain = tmp_path / "plain"
    plain.mkdir()
    assert default_mode(False, repo / "pkg") == "coding"
    assert default_mode(True, plain) == "coding"
    assert default_mode(False, plain) == "work"


def test_a_work_session_works_in_its_own_workspace_with_its_team(tmp_path: Path) -> None:
    home, unused = tmp_path / "home", tmp_path / "cwd"
    unused.mkdir()
    turns = [
        call("delegate_writer", "assistant", task="draft outline.md"),
        call("create_file", "writer", path="outline.md", content="# Outline\n"),
        say("outline.md drafted", "writer"),
        say("Wrote outline.md.", "assistant"),
    ]
    report, events, model, _ = scripted_run("outline a talk", turns, repo=unused, home=home, mode="work")
    assert (report.mode, report.lead, report.status) == ("work", "assistant", "completed")
    workspace = Path(events[0].payload["root"])
    assert workspace.parent == (home / "workspaces").resolve()
    assert (workspace / "outline.md").read_text() == "# Outline\n"
    assert list(unused.iterdir()) == []
    offered = {t.name for t in next(r for r in model.requests if r.agent_role == "assistant").tools}
    assert {"delegate_writer", "delegate_researcher"} <= offered
    assert not offered & {"coder", "tester", "run_check", "plan_task"}  # the Coding workflow is not offered


def test_an_unknown_or_member_agent_cannot_lead(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    with pytest.raises(ConfigError, match="unknown agent 'ghost'"):
        scripted_run("hi", [], repo=repo, home=tmp_path / "home", agent="ghost")
    with pytest.raises(ConfigError, match="is a member, not a lead"):
        scripted_run("hi", [], repo=repo, home=tmp_path / "home", agent="coder")


@pytest.mark.slow
def test_agents_enable_and_disable_and_the_older_on_off_form(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert cli(home, "agents", "disable", "writer", cwd=tmp_path).stdout.strip() == "writer: off"
    listed = cli(home, "agents", "list", "--mode", "work", cwd=tmp_path).stdout
    assert "writer" in listed and "[off]" in listed
    assert cli(home, "agents", "enable", "writer", cwd=tmp_path).stdout.strip() == "writer: on"
    assert cli(home, "agents", "tester", "off", cwd=tmp_path).stdout.strip() == "tester: off"
    assert "tester: off" in cli(home, "agents", cwd=tmp_path).stdout
    refused = cli(home, "agents", "disable", "ghost", cwd=tmp_path)
    assert refused.returncode == 2 and "unknown agent 'ghost'" in refused.stderr


def test_work_mode_refuses_a_repository(tmp_path: Path) -> None:
    result = cli(tmp_path / "home", "run", "--mode", "work", "--repo", str(tmp_path), "--model", "scripted:/x", "hi")
    assert result.returncode == 2
    assert result.stderr.strip() == "error: Work mode uses its own session workspace; drop --repo or use --mode coding"
    assert not (tmp_path / "home" / "workspaces").exists()
