"""``protoagent commit`` commits only the session's files, names the verifying checks, asks for
approval, and never runs the repository's hooks or configured programs."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.checkpoints.support import cli, events, three_turn_session


def _git(repo: Path, *args: str) -> str:
    """The test's own git, which must not run the planted programs either."""
    safe = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "--no-pager"]
    return subprocess.run(["git", *safe, *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def _plant_programs(repo: Path, marker: Path) -> None:
    """A hooks folder, a default pre-commit hook and an fsmonitor, each leaving ``marker``."""
    hooks = repo / "planted-hooks"
    hooks.mkdir()
    script = f"#!/bin/sh\necho ran >> {marker}\n"
    for folder in (hooks, repo / ".git" / "hooks"):
        for name in ("pre-commit", "commit-msg", "post-commit", "prepare-commit-msg"):
            (folder / name).write_text(script)
            (folder / name).chmod(0o755)
    monitor = repo / "monitor.sh"
    monitor.write_text(script)
    monitor.chmod(0o755)
    _git(repo, "config", "core.hooksPath", str(hooks))
    _git(repo, "config", "core.fsmonitor", str(monitor))
    _git(repo, "config", "core.pager", f"sh -c 'echo ran >> {marker}'")


def test_commit_contains_only_the_session_files_and_names_the_verifying_checks(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    marker = tmp_path / "ran"
    _plant_programs(repo, marker)
    (repo / "unrelated.txt").write_text("not the session's\n")
    _git(repo, "add", "unrelated.txt")  # staged work of the person's own stays staged, uncommitted
    done = cli(home, "commit", sid, "--approval", "auto", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    files = _git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(files) == ["a.py", "b.py", "c.py"]
    message = _git(repo, "log", "-1", "--format=%B")
    assert message.startswith("set A to 2\n") and "- b.py (new)" in message
    assert "Verified by: unittest" in message and result["verified_by"]
    assert "unrelated.txt" in _git(repo, "diff", "--cached", "--name-only")
    assert not marker.exists(), "a planted hook, fsmonitor or pager ran"
    kinds = [e["type"] for e in events(home, sid)][-3:]
    assert kinds == ["approval.requested", "approval.decided", "session.committed"]


def test_commit_without_approval_commits_nothing(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    head = _git(repo, "rev-parse", "HEAD")
    done = cli(home, "commit", sid)  # ask, and no terminal to ask on
    assert done.returncode == 1 and "commit not approved" in done.stderr
    assert _git(repo, "rev-parse", "HEAD") == head
    denied = [e for e in events(home, sid) if e["type"] == "approval.decided"][-1]
    assert denied["payload"]["tool"] == "git_commit" and denied["payload"]["decision"] == "deny"


def test_commit_refuses_a_file_changed_outside_the_session(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    (repo / "a.py").write_text("A = 'mine'\n")
    head = _git(repo, "rev-parse", "HEAD")
    done = cli(home, "commit", sid, "--approval", "auto")
    assert done.returncode == 1 and "a.py changed outside the session" in done.stderr
    assert _git(repo, "rev-parse", "HEAD") == head
