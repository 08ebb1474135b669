"""Items 13 and 16: a batch task's ``repo`` and ``commit`` reach git only as operands, never as
options, and a FIFO in a batch repository is a one-line task error naming it, never a hang."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from protoagent.testing import final_turn, make_repo, write_script

from .support import EXE


def _batch(tmp_path: Path, tasks: list[dict[str, Any]]) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    script = write_script(tmp_path / "turns.jsonl", [final_turn("done", role="architect")])
    suite = tmp_path / "suite.jsonl"
    lines = [json.dumps({"objective": "what is here?", "model": f"scripted:{script}", **t}) for t in tasks]
    suite.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PROTOAGENT_STORE"}
    env.update(PROTOAGENT_HOME=str(tmp_path / "home"), RAY_USAGE_STATS_ENABLED="0")
    out = tmp_path / "out"
    done = subprocess.run(
        [*EXE, "batch", str(suite), "--out", str(out), "--workers", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return done, {row["id"]: row for row in rows}


def test_a_repo_or_commit_that_looks_like_a_git_option_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    origin = make_repo(tmp_path / "origin", {"a.py": "x = 1\n"})
    tasks = [
        {"id": "upload-pack", "repo": f"--upload-pack=touch {marker};://x"},
        {"id": "config", "repo": f"-cprotocol.allow=always --upload-pack=touch {marker} file://{origin}"},
        {"id": "commit-option", "repo": f"file://{origin}", "commit": "--orphan=evil"},
    ]
    done, rows = _batch(tmp_path, tasks)
    assert "Traceback" not in done.stderr
    assert not marker.exists(), "git ran a command the task's repo named"
    assert all(rows[t["id"]]["status"] == "error" for t in tasks), rows
    assert "is not a revision" in rows["commit-option"]["error"]
    assert all("\n" not in str(row["error"]) for row in rows.values())


def test_a_fifo_in_a_batch_repository_is_a_one_line_task_error_not_a_hang(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    os.mkfifo(repo / "pipe")
    done, rows = _batch(tmp_path, [{"id": "fifo", "repo": str(repo)}])
    assert "Traceback" not in done.stderr + done.stdout
    row = rows["fifo"]
    assert row["status"] == "error" and "pipe" in row["error"] and "not a regular file" in row["error"]
    assert "\n" not in row["error"]


def test_a_check_override_never_reads_or_writes_through_a_symlinked_project_json(tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"secret": "CANARY-BATCH-77"}\n', encoding="utf-8")
    linked_file = make_repo(tmp_path / "file-link", {"a.py": "x = 1\n"})
    (linked_file / ".protoagent").mkdir()
    os.symlink(outside, linked_file / ".protoagent/project.json")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    linked_folder = make_repo(tmp_path / "folder-link", {"a.py": "x = 1\n"})
    os.symlink(elsewhere, linked_folder / ".protoagent")
    checks = [{"id": "t", "argv": ["/bin/true"]}]
    tasks = [
        {"id": "file-link", "repo": str(linked_file), "checks": checks, "surface": "question"},
        {"id": "folder-link", "repo": str(linked_folder), "checks": checks, "surface": "question"},
    ]
    done, rows = _batch(tmp_path, tasks)
    assert "Traceback" not in done.stderr
    assert outside.read_text(encoding="utf-8") == '{"secret": "CANARY-BATCH-77"}\n'
    assert list(elsewhere.iterdir()) == [], "the override was written outside the task's copy"
    assert all(rows[t["id"]]["status"] != "error" for t in tasks), rows
