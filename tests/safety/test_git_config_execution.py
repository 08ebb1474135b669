"""Item 1: a read never runs code named by the repository's git config (fsmonitor and friends)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.events.sqlite_store import SQLiteStore
from protoagent.settings import set_agent
from protoagent.testing import final_turn, make_repo, tool_turn, write_script
from protoagent.workspace.paths import DIR_FLAGS
from protoagent.workspace.search import compile_pattern, search_files

from .support import cli, hostile_git_config


def _search_run(tmp_path: Path, repo: Path) -> dict[str, object]:
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("search_regex", role="architect", pattern="needle", path="."),
            tool_turn("list_directory", role="architect", path="."),
            final_turn("searched", role="architect"),
        ],
    )
    done = cli(
        tmp_path / "home",
        "run",
        "--model",
        f"scripted:{script}",
        "--repo",
        str(repo),
        "--approval",
        "deny",
        "--json",
        "where is the needle defined?",
    )
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout)["session_id"]
    shown = cli(tmp_path / "home", "sessions", "show", session_id, "--json")
    events = json.loads(shown.stdout)["events"]
    ended = [e["payload"] for e in events if e["type"] == "tool.ended"]
    assert ended and "a.py:1: needle = 1" in json.dumps(ended[0]), "the search itself must have run"
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _arm(root: Path, git_dir: Path, marker: Path) -> None:
    (git_dir / "config").write_text(hostile_git_config(marker))
    hooks = root / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in ("post-index-change", "pre-commit", "fsmonitor-watchman"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
    (root / ".gitattributes").write_text("* filter=evil diff=evil\n")


def test_fsmonitor_in_repository_config_never_runs_under_approval_deny(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "needle = 1\n"})
    marker = tmp_path / "MARKER"
    _arm(repo, repo / ".git", marker)
    _search_run(tmp_path, repo)
    assert not marker.exists(), "a command from .git/config ran without approval"


def test_bare_repository_layout_in_non_git_workspace_never_runs_fsmonitor(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    (root / "objects").mkdir(parents=True)
    (root / "refs").mkdir()
    (root / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "a.py").write_text("needle = 1\n")
    marker = tmp_path / "MARKER"
    _arm(root, root, marker)
    _search_run(tmp_path, root)
    assert not marker.exists(), "a crafted bare-repository config ran a command without approval"


@pytest.mark.parametrize("layout", ["repository", "bare_layout"])
def test_search_finds_files_and_never_runs_git(tmp_path: Path, layout: str) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    git_dir = root / ".git" if layout == "repository" else root
    git_dir.mkdir(exist_ok=True)
    marker = tmp_path / "MARKER"
    _arm(root, git_dir, marker)
    (root / "src").mkdir()
    (root / "src" / "found.py").write_text("needle\n")
    root_fd = os.open(root, DIR_FLAGS)
    try:
        found = search_files(root_fd, compile_pattern("needle"), ".", None)
    finally:
        os.close(root_fd)
    assert [m.path for m in found.matches] == ["src/found.py"]
    assert not marker.exists()


GIT_SERVER = shutil.which("mcp-server-git") or str(Path(sys.executable).parent / "mcp-server-git")
COMMIT_HOOKS = ("pre-commit", "commit-msg", "post-commit")


def _plant_hooks(folder: Path, marks: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in COMMIT_HOOKS:
        (folder / name).write_text(f"#!/bin/sh\ntouch {marks / folder.name}-{name}\n")
        (folder / name).chmod(0o755)


@pytest.mark.skipif(not Path(GIT_SERVER).exists(), reason="mcp-server-git is not installed")
@pytest.mark.parametrize("where", [".git/hooks", "core.hooksPath"])
def test_the_users_git_server_never_runs_the_repositorys_commit_hooks(tmp_path: Path, where: str) -> None:
    """GitPython runs commit hooks itself; git's own ``core.hooksPath`` override never reaches it."""
    pytest.importorskip("mcp", reason="the MCP broker needs the mcp SDK (protoagent[mcp])")
    marks = tmp_path / "marks"
    marks.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    set_agent(home, "mcp", True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"git": {"command": GIT_SERVER, "trusted": True}}}))
    repo = make_repo(tmp_path / "repo", {"notes.txt": "one\n"})
    for key, value in (("user.name", "t"), ("user.email", "t@t")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    if where == ".git/hooks":
        _plant_hooks(repo / ".git" / "hooks", marks)
    else:
        _plant_hooks(repo / "tools" / "hooks", marks)
        subprocess.run(["git", "config", "core.hooksPath", "tools/hooks"], cwd=repo, check=True)
    control = [sys.executable, "-c", "import git; git.Repo('.').index.commit('control')"]
    subprocess.run(control, cwd=repo, check=True, capture_output=True)
    ran = sorted(path.name for path in marks.iterdir())
    assert len(ran) == len(COMMIT_HOOKS), f"the planted hooks run through GitPython itself: {ran}"
    for mark in marks.iterdir():
        mark.unlink()

    (repo / "notes.txt").write_text("one\ntwo\n")
    calls = [
        tool_turn("mcp__git__git_add", role="architect", repo_path=str(repo), files=["notes.txt"]),
        tool_turn("mcp__git__git_commit", role="architect", repo_path=str(repo), message="through the server"),
        final_turn("committed", role="architect"),
    ]
    script = write_script(tmp_path / "turns.jsonl", calls)
    args = ["--repo", str(repo), "--model", f"scripted:{script}", "--surface", "editing", "--approval", "auto"]
    done = cli(home, "run", *args, "--json", "commit the change")
    assert done.returncode in (0, 1, 3), done.stderr
    with SQLiteStore(home / "sessions.sqlite") as store:
        session = max(store.list(), key=lambda s: s.created)
        ended = {e.payload["tool"]: e.payload for e in store.load(session.session_id) if e.type == "tool.ended"}
    commit = ended["mcp__git__git_commit"]
    print(f"item 3 hooks ({where}): {commit['status']} {str(commit['output'])[:80]!r}, ran {sorted(os.listdir(marks))}")
    assert commit["status"] == "ok" and "committed successfully" in str(commit["output"])
    log = subprocess.run(["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True)
    assert log.stdout.strip() == "through the server", "the commit itself was made"
    assert sorted(os.listdir(marks)) == [], "no hook of the repository ran"
