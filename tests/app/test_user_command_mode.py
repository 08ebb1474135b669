"""A person's ``!command`` runs in the session's own mode, workspace and lead, and reports them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.app.support import cli, say, scripted_run

from protoagent.testing import make_repo, write_script


def test_a_bang_command_in_work_mode_creates_a_work_session_and_reports_work(tmp_path: Path) -> None:
    home = tmp_path / "home"
    report, events, _, _ = scripted_run("!echo from-work", [], repo=tmp_path, home=home, mode="work")
    assert (report.mode, report.lead, report.surface, report.status) == ("work", "assistant", "command", "completed")
    created = events[0].payload
    assert (created["mode"], created["lead"]) == ("work", "assistant")
    assert Path(created["root"]).parent == home / "workspaces"
    ended = next(e for e in events if e.type == "tool.ended")
    assert "from-work" in ended.payload["output"]


def test_a_bang_command_in_coding_mode_reports_coding_and_the_chosen_lead(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"}), tmp_path / "home"
    report, events, _, _ = scripted_run("!echo from-coding", [], repo=repo, home=home)
    assert (report.mode, report.lead) == ("coding", "architect")
    assert (events[0].payload["mode"], events[0].payload["root"]) == ("coding", str(repo))


@pytest.mark.slow
def test_a_bang_command_on_resume_continues_that_work_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    script = write_script(tmp_path / "w.jsonl", [say("An outline.", "assistant")])
    first = cli(home, "run", "--mode", "work", "--model", f"scripted:{script}", "--json", "outline a talk")
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    command = cli(home, "run", "--resume", session_id, "--approval", "auto", "--json", "!pwd")
    assert command.returncode == 0, command.stderr
    report = json.loads(command.stdout)
    assert (report["session_id"], report["mode"], report["lead"]) == (session_id, "work", "assistant")
    shown = json.loads(cli(home, "sessions", "show", session_id, "--json").stdout)
    assert shown["root"] in report["summary"]  # the command ran in the session's own workspace
    assert [e["type"] for e in shown["events"]].count("session.created") == 1
    assert len(list((home / "workspaces").iterdir())) == 1
