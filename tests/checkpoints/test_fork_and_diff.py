"""A fork is an independent session from a checkpoint; ``protoagent diff`` prints the log's changes."""

from __future__ import annotations

import json
from pathlib import Path

from tests.checkpoints.support import cli, coder_turns, create, events, run_turn, three_turn_session


def test_a_fork_is_an_independent_session_from_its_checkpoint(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    parent_before = events(home, sid)
    forked = cli(home, "sessions", "fork", sid, "--to", "1", "--json")
    assert forked.returncode == 0, forked.stderr
    fork_id = json.loads(forked.stdout)["session_id"]
    assert fork_id != sid
    fork_log = events(home, fork_id)
    assert fork_log[0]["payload"]["forked_from"] == {"session_id": sid, "turn": 1}
    asked = [e["payload"]["text"] for e in fork_log if e["type"] == "user.message"]
    assert "set A to 2" in asked and "set C to 2" not in asked
    report = run_turn(
        home, repo, tmp_path / "f.jsonl", coder_turns(create("d.py", "D = 1\n")), "add d.py", resume=fork_id
    )
    assert report["session_id"] == fork_id and (repo / "d.py").exists()
    assert events(home, sid) == parent_before  # the parent never saw the fork's turn
    assert "d.py" in cli(home, "diff", fork_id).stdout and "d.py" not in cli(home, "diff", sid).stdout
    assert cli(home, "sessions", "fork", sid, "--to", "7").returncode == 2


def test_diff_prints_one_turn_or_the_whole_session_from_the_log(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    (repo / "a.py").write_text("A = 'changed by hand'\n")  # the diff reads the log, not the tree
    whole = cli(home, "diff", sid)
    assert whole.returncode == 0, whole.stderr
    assert "-A = 1\n+A = 3\n" in whole.stdout and "hand" not in whole.stdout
    turn = cli(home, "diff", sid, "--turn", "3")
    assert turn.stdout.startswith("diff --git a/c.py b/c.py\n") and "a.py" not in turn.stdout
    bad = cli(home, "diff", sid, "--turn", "4")
    assert bad.returncode == 2 and bad.stderr.startswith("error: turn 4 is not a user turn")
