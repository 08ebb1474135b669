"""Resumable sessions: same mode, workspace, lead and task record; migration is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.app.support import call, cli, say, scripted_run

from protoagent.events import MemoryStore
from protoagent.testing import make_repo, write_script


def test_resume_continues_the_session_from_its_log(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    store = MemoryStore()
    first, _, _, _ = scripted_run(
        "where is VALUE defined?",
        [call("read_file", "architect", path="notes.py"), say("In notes.py line 1.", "architect")],
        repo=repo,
        home=home,
        store=store,
        surface="question",
    )
    second, events, model, _ = scripted_run(
        "and what is its value?",
        [say("VALUE is 1.", "architect")],
        repo=repo,
        home=home,
        store=store,
        surface="question",
        resume=first.session_id,
    )
    assert second.session_id == first.session_id
    assert [e.type for e in events].count("session.created") == 1
    assert [e.type for e in events].count("session.resumed") == 1
    shown = [m for r in model.requests for m in r.messages]
    assert any("where is VALUE defined?" in str(m) for m in shown)  # the earlier turn is history
    resumed = [e for e in events if e.type == "task.updated" and e.payload["reason"] == "resumed"]
    assert resumed and resumed[0].payload["record"]["objective"] == "where is VALUE defined?"
    assert (second.mode, second.lead) == ("coding", "architect")


def _work_session(tmp_path: Path, home: Path) -> str:
    script = write_script(tmp_path / "work.jsonl", [say("Here is an outline.", "assistant")])
    result = cli(home, "run", "--mode", "work", "--model", f"scripted:{script}", "--json", "outline a talk")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["mode"], report["lead"]) == ("work", "assistant")
    return str(report["session_id"])


def _events(home: Path, session_id: str) -> dict[str, Any]:
    shown = cli(home, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    return dict(json.loads(shown.stdout))


@pytest.mark.slow
def test_persisted_work_and_coding_sessions_cannot_change_mode_on_resume(tmp_path: Path) -> None:
    """R24: a resume asking for the other mode (or another repository) exits 2 and writes nothing."""
    home = tmp_path / "home"
    work_id = _work_session(tmp_path, home)
    before = _events(home, work_id)
    assert (before["mode"], before["lead"]) == ("work", "assistant")
    refused = cli(home, "run", "--resume", work_id, "--mode", "coding", "--model", "scripted:/nonexistent", "go on")
    assert refused.returncode == 2
    assert refused.stderr.strip().count("\n") == 0 and "cannot change mode" in refused.stderr
    assert _events(home, work_id) == before
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    script = write_script(tmp_path / "q.jsonl", [say("A is 1.", "architect")])
    made = cli(home, "run", "--repo", str(repo), "--model", f"scripted:{script}", "--json", "what is A?")
    coding_id = json.loads(made.stdout)["session_id"]
    coding_before = _events(home, coding_id)
    assert coding_before["mode"] == "coding"
    for flags in (["--mode", "work"], ["--repo", str(tmp_path)]):
        again = cli(home, "run", "--resume", coding_id, *flags, "--model", f"scripted:{script}", "next")
        assert again.returncode == 2, again.stderr
        assert again.stderr.startswith("error: session ") and again.stderr.strip().count("\n") == 0
    assert _events(home, coding_id) == coding_before


@pytest.mark.slow
def test_a_work_session_resumes_in_its_own_workspace(tmp_path: Path) -> None:
    home = tmp_path / "home"
    work_id = _work_session(tmp_path, home)
    workspace = Path(_events(home, work_id)["root"])
    assert workspace.parent == home / "workspaces" and workspace.is_dir()
    script = write_script(tmp_path / "more.jsonl", [say("Added a conclusion.", "assistant")])
    result = cli(home, "run", "--resume", work_id, "--model", f"scripted:{script}", "--json", "add a conclusion")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert (report["session_id"], report["mode"], report["lead"]) == (work_id, "work", "assistant")
    assert sorted(p.name for p in (home / "workspaces").iterdir()) == [workspace.name]


def test_resuming_an_unknown_session_is_a_one_line_error(tmp_path: Path) -> None:
    result = cli(tmp_path / "home", "run", "--resume", "s_missing", "--model", "scripted:/x", "hello")
    assert result.returncode == 2
    assert result.stderr.startswith("error: cannot resume") and result.stderr.strip().count("\n") == 0
