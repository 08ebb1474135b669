"""``run --worktree`` works on a new branch in a new worktree; the person's checkout stays
byte-identical, and the worktree is kept or removed as they chose."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.checkpoints.support import cli, coder_turns, edit, events, repo_with_tests
from tests.checkpoints.test_commit import _plant_programs

from protoagent.testing import write_script


def _checkout(repo: Path) -> dict[str, bytes]:
    """Every file of the checkout (``.git`` too, but not git's own bookkeeping of worktrees)."""
    skipped = ("worktrees", "logs", "refs", "index", "ORIG_HEAD", "packed-refs")
    out = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo)
        if path.is_file() and not (rel.parts[0] == ".git" and len(rel.parts) > 1 and rel.parts[1] in skipped):
            out[str(rel)] = path.read_bytes()
    return out


def _run(tmp_path: Path, home: Path, repo: Path, *flags: str) -> tuple[subprocess.CompletedProcess[str], str]:
    script = write_script(tmp_path / "t.jsonl", coder_turns(edit("a.py", "A = 1\n", "A = 1", "A = 2")))
    done = cli(home, "run", "--repo", str(repo), "--model", f"scripted:{script}", "--approval", "auto",
               "--json", "--worktree", *flags, "set A to 2")  # fmt: skip
    assert done.stdout, done.stderr
    return done, json.loads(done.stdout)["session_id"]


def test_worktree_run_leaves_the_checkout_byte_identical_and_keeps_the_branch(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = repo_with_tests(tmp_path / "repo", {"a.py": "A = 1\n"})
    (repo / "a.py").write_text("A = 1\n# my uncommitted note\n")  # the person's own work in progress
    (repo / "scratch.txt").write_text("untracked\n")
    before = _checkout(repo)
    done, sid = _run(tmp_path, home, repo)
    assert _checkout(repo) == before
    root = Path(events(home, sid)[0]["payload"]["root"])
    assert root.parent == home / "worktrees" and (root / "a.py").read_text() == "A = 2\n"
    assert "worktree kept: " in done.stderr
    branch = subprocess.run(["git", "-C", str(root), "branch", "--show-current"], capture_output=True, text=True)
    assert branch.stdout.startswith("protoagent/")
    assert "+A = 2" in cli(home, "diff", sid).stdout


def test_worktree_end_remove_removes_the_worktree_and_its_branch(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = repo_with_tests(tmp_path / "repo", {"a.py": "A = 1\n"})
    before = _checkout(repo)
    done, sid = _run(tmp_path, home, repo, "--worktree-end", "remove")
    root = Path(events(home, sid)[0]["payload"]["root"])
    assert not root.exists() and "removed" in done.stderr
    branches = subprocess.run(["git", "branch", "--list", "protoagent/*"], cwd=repo, capture_output=True, text=True)
    assert branches.stdout == ""
    assert _checkout(repo) == before
    assert "+A = 2" in cli(home, "diff", sid).stdout  # the log keeps the change


def test_worktree_outside_a_repository_is_a_one_line_error(tmp_path: Path) -> None:
    folder = tmp_path / "plain"
    folder.mkdir()
    done = cli(tmp_path / "home", "run", "--repo", str(folder), "--worktree", "--model", "scripted:/x", "go")
    assert done.returncode == 2 and done.stderr.startswith("error: --worktree needs a git repository")
    assert done.stderr.strip().count("\n") == 0


def test_worktree_checkout_runs_no_planted_hook_filter_or_fsmonitor(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = repo_with_tests(tmp_path / "repo", {"a.py": "A = 1\n", ".gitattributes": "*.py filter=evil\n"})
    marker = tmp_path / "ran"
    _plant_programs(repo, marker)
    for key in ("smudge", "clean"):
        subprocess.run(
            ["git", "config", f"filter.evil.{key}", f"sh -c 'echo ran >> {marker}; cat'"], cwd=repo, check=True
        )
    (repo / "planted-hooks" / "post-checkout").write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    (repo / "planted-hooks" / "post-checkout").chmod(0o755)
    before = _checkout(repo)
    done, sid = _run(tmp_path, home, repo)
    assert json.loads(done.stdout)["verified"] is True, done.stdout
    assert not marker.exists(), "a planted hook, filter or fsmonitor ran"
    assert _checkout(repo) == before
    assert (Path(events(home, sid)[0]["payload"]["root"]) / "a.py").read_text() == "A = 2\n"
