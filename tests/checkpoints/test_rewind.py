"""Rewind restores exactly what the session wrote, refuses to overwrite outside work, and hides
rewound turns from the model's next request without deleting them from the log."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

from tests.checkpoints.support import (
    cli,
    coder_turns,
    create,
    edit,
    events,
    repo_with_tests,
    run_turn,
    three_turn_session,
)

from protoagent.api import open_store
from protoagent.testing import ScriptedModel
from protoagent.workflow.run import RunOptions, run_task


def _tree(repo: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(repo)): p.read_bytes()
        for p in sorted(repo.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


def _tree_at_turn_1(tmp_path: Path, repo: Path) -> dict[str, bytes]:
    """The files as turn 1 left them: the original checkout with a.py's first edit."""
    clean = tmp_path / "expected"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    (clean / "a.py").write_text("A = 2\n")
    return _tree(clean)


def test_rewind_to_turn_1_restores_exactly_the_files_the_session_wrote(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    assert (repo / "a.py").read_text() == "A = 3\n" and (repo / "b.py").exists()
    done = cli(home, "rewind", sid, "--to", "1", "--code", "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert [(r["path"], r["text"]) for r in result["restored"]] == [
        ("a.py", "A = 2\n"),
        ("b.py", None),
        ("c.py", "C = 1\n"),
    ]
    assert _tree(repo) == _tree_at_turn_1(tmp_path, repo)
    # the diff of the session now shows only what turn 1 left
    shown = cli(home, "diff", sid)
    assert (
        shown.returncode == 0 and "+A = 2" in shown.stdout and "b.py" not in shown.stdout and "c.py" not in shown.stdout
    )
    assert cli(home, "rewind", sid, "--to", "0", "--code").returncode == 0
    assert (repo / "a.py").read_text() == "A = 1\n"


def test_rewind_refuses_with_a_list_when_a_file_changed_outside_the_session(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    (repo / "c.py").write_text("C = 'mine'\n")
    before = _tree(repo)
    count = len(events(home, sid))
    done = cli(home, "rewind", sid, "--to", "1")
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0
    assert "c.py changed outside the session" in done.stderr and "nothing was changed" in done.stderr
    assert _tree(repo) == before and len(events(home, sid)) == count


STAMPING_TEST = (
    "import pathlib, unittest\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n"
    "        stamp = pathlib.Path('stamp.txt')\n        stamp.write_text(stamp.read_text() + 'x')\n"
)


def test_rewind_lists_the_commands_run_since_and_the_files_they_changed(tmp_path: Path) -> None:
    home, _repo, sid = three_turn_session(tmp_path, {"stamp.txt": "", "test_ok.py": STAMPING_TEST})
    done = cli(home, "rewind", sid, "--to", "1", "--code")
    assert done.returncode == 0, done.stderr
    assert "commands ran since the checkpoint; their side effects are not rewound:" in done.stdout
    assert "run_check: " in done.stdout and "-m unittest" in done.stdout and "runs)" in done.stdout
    assert "files those commands changed: stamp.txt" in done.stdout


def test_the_next_model_request_no_longer_carries_the_rewound_turns(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    done = cli(home, "rewind", sid, "--to", "1", "--conversation")
    assert done.returncode == 0, done.stderr
    assert "the model no longer sees turns 2, 3" in done.stdout
    assert (repo / "c.py").read_text() == "C = 2\n"  # --conversation leaves the files alone
    model = ScriptedModel.from_lines(coder_turns(edit("a.py", "A = 3\n", "A = 3", "A = 4")))
    with open_store(home) as store:
        options = RunOptions(
            repo=repo, model="scripted:inline", store=store, approval="auto", provider=model,
            artifacts_root=home / "artifacts", data_home=home, resume=sid,
        )  # fmt: skip
        asyncio.run(run_task("set A to 4", options))
    lead = next(r for r in model.requests if any(m.content == "set A to 4" for m in r.messages[1:]))
    first = str(lead.messages)  # the lead's first request of the new turn
    assert "set A to 2" in first
    assert "set A to 3 and add b.py" not in first and "set C to 2" not in first
    kept = [e["payload"]["text"] for e in events(home, sid) if e["type"] == "user.message"]
    assert "set C to 2" in kept  # the log keeps the rewound turns


def test_rewind_names_a_checkpoint_or_fails_in_one_line(tmp_path: Path) -> None:
    home, _repo, sid = three_turn_session(tmp_path)
    for args in (["--to", "9"], [], ["--code", "--both", "--to", "1"]):
        done = cli(home, "rewind", sid, *args)
        assert done.returncode == 2 and done.stderr.startswith("error: ")
        assert done.stderr.strip().count("\n") == 0
    assert cli(home, "rewind", "s_missing", "--to", "0").returncode == 2


FAILING_TEST = "import unittest\n\nclass Bad(unittest.TestCase):\n    def test_bad(self):\n        self.fail('no')\n"


def test_rewind_to_verified_goes_back_to_the_latest_turn_a_check_verified(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = repo_with_tests(tmp_path / "repo", {"a.py": "A = 1\n"})
    first = run_turn(home, repo, tmp_path / "t1.jsonl", coder_turns(edit("a.py", "A = 1\n", "A = 1", "A = 2")), "A 2")
    assert first["verified"] is True
    sid = str(first["session_id"])
    second = run_turn(home, repo, tmp_path / "t2.jsonl", coder_turns(create("test_bad.py", FAILING_TEST)), "add", sid)
    assert second["verified"] is False
    done = cli(home, "rewind", sid, "--to-verified", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["to_turn"] == 1
    assert not (repo / "test_bad.py").exists() and (repo / "a.py").read_text() == "A = 2\n"


def test_after_a_conversation_rewind_to_0_the_task_record_starts_from_the_next_objective(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    assert cli(home, "rewind", sid, "--to", "0", "--conversation").returncode == 0
    run_turn(
        home, repo, tmp_path / "t4.jsonl", coder_turns(edit("a.py", "A = 3\n", "A = 3", "A = 4")), "set A to 4", sid
    )
    log = events(home, sid)
    start = max(e["seq"] for e in log if e["type"] == "session.resumed")
    records = [e["payload"]["record"] for e in log if e["type"] == "task.updated" and e["seq"] > start]
    assert records and records[0]["objective"] == "set A to 4"


def test_a_file_too_large_to_record_is_named_in_the_diff_and_never_restored_blindly(tmp_path: Path) -> None:
    home = tmp_path / "home"
    big = "FIRST = 1\n" + "x = 1\n" * 200_000  # 1.2 MB: over the 1 MiB a write records
    repo = repo_with_tests(tmp_path / "repo", {"big.py": big})
    turns = coder_turns(edit("big.py", big, "FIRST = 1\n", "FIRST = 2\n"))
    first = run_turn(home, repo, tmp_path / "t1.jsonl", turns, "change big.py")
    sid = str(first["session_id"])
    shown = cli(home, "diff", sid)
    assert "diff --git a/big.py b/big.py\n" in shown.stdout and "too large to record" in shown.stdout
    edited = (repo / "big.py").read_bytes()
    done = cli(home, "rewind", sid, "--to", "0", "--code")
    assert done.returncode == 1 and "big.py was too large for its text to be recorded" in done.stderr
    assert (repo / "big.py").read_bytes() == edited
