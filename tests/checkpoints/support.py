"""Coding sessions on temporary git repositories, driven through the CLI with the scripted model."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

EXE = [sys.executable, "-m", "protoagent"]
TEST_FILE = "import unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n"


def cli(home: Path, *args: str, cwd: Path | None = None, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    return subprocess.run(
        [*EXE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        cwd=cwd,
    )


def revision(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def repo_with_tests(root: Path, files: dict[str, str]) -> Path:
    """A committed git repository with one passing unittest, so an edit can be verified."""
    return make_repo(root, {"test_ok.py": TEST_FILE, **files})


def coder_turns(*writes: dict[str, Any], say: str = "done") -> list[dict[str, Any]]:
    """An Architect turn that delegates to the Coder, the Coder's writes, and both final answers."""
    return [
        tool_turn("coder", role="architect", task="make the change"),
        *[tool_turn(str(w.pop("tool")), role="coder", **w) for w in writes],
        final_turn(say, role="coder"),
        final_turn(say, role="architect"),
    ]


def edit(path: str, old_text: str, old: str, new: str) -> dict[str, Any]:
    return {"tool": "edit_file", "path": path, "old": old, "new": new, "expected_revision": revision(old_text)}


def create(path: str, content: str) -> dict[str, Any]:
    return {"tool": "create_file", "path": path, "content": content}


def run_turn(
    home: Path, repo: Path, script: Path, turns: list[dict[str, Any]], objective: str, resume: str | None = None
) -> dict[str, Any]:
    """One user turn through ``protoagent run``; returns the JSON report."""
    write_script(script, turns)
    args = ["run", "--repo", str(repo), "--model", f"scripted:{script}", "--approval", "auto", "--json"]
    if resume is not None:
        args = ["run", "--resume", resume, "--model", f"scripted:{script}", "--approval", "auto", "--json"]
    done = cli(home, *args, objective)
    assert done.stdout, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def events(home: Path, session_id: str) -> list[dict[str, Any]]:
    shown = cli(home, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    return list(json.loads(shown.stdout)["events"])


def three_turn_session(tmp_path: Path, extra: dict[str, str] | None = None) -> tuple[Path, Path, str]:
    """A session that edits ``a.py`` in turn 1, ``a.py`` again and creates ``b.py`` in turn 2, and
    edits ``c.py`` in turn 3. Returns the data home, the repository and the session id."""
    home = tmp_path / "home"
    repo = repo_with_tests(tmp_path / "repo", {"a.py": "A = 1\n", "c.py": "C = 1\n", **(extra or {})})
    first = run_turn(
        home, repo, tmp_path / "t1.jsonl", coder_turns(edit("a.py", "A = 1\n", "A = 1", "A = 2")), "set A to 2"
    )
    sid = str(first["session_id"])
    second = coder_turns(edit("a.py", "A = 2\n", "A = 2", "A = 3"), create("b.py", "B = 1\n"))
    run_turn(home, repo, tmp_path / "t2.jsonl", second, "set A to 3 and add b.py", resume=sid)
    third = coder_turns(edit("c.py", "C = 1\n", "C = 1", "C = 2"))
    run_turn(home, repo, tmp_path / "t3.jsonl", third, "set C to 2", resume=sid)
    return home, repo, sid
