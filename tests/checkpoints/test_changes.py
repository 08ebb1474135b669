"""The session's changes come from the log alone, and their diff is what git would print."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.checkpoints.support import events, three_turn_session

from protoagent.events.types import Event
from protoagent.workflow.changes import session_changes, unified_diff, user_turns


def _log(home: Path, sid: str) -> list[Event]:
    return [Event.model_validate(e) for e in events(home, sid)]


def test_changes_per_file_hold_the_first_preimage_and_the_last_afterimage(tmp_path: Path) -> None:
    home, _repo, sid = three_turn_session(tmp_path)
    log = _log(home, sid)
    assert [t.number for t in user_turns(log)] == [1, 2, 3]
    changes = {c.path: c for c in session_changes(log)}
    assert sorted(changes) == ["a.py", "b.py", "c.py"]
    assert (changes["a.py"].before, changes["a.py"].after, changes["a.py"].turns) == ("A = 1\n", "A = 3\n", (1, 2))
    assert changes["b.py"].created and changes["b.py"].before is None
    assert [c.path for c in session_changes(log, turn=2)] == ["a.py", "b.py"]
    assert session_changes(log, turn=2)[0].before == "A = 2\n"


def test_the_session_diff_applies_with_git_to_the_original_checkout(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    patch = unified_diff(session_changes(_log(home, sid)))
    assert "diff --git a/b.py b/b.py\nnew file mode 100644\n" in patch and "--- /dev/null\n+++ b/b.py\n" in patch
    clean = tmp_path / "clean"
    subprocess.run(["git", "clone", "-q", str(repo), str(clean)], check=True)
    applied = subprocess.run(["git", "apply", "--index", "-"], cwd=clean, input=patch, text=True, capture_output=True)
    assert applied.returncode == 0, applied.stderr
    for name in ("a.py", "b.py", "c.py"):
        assert (clean / name).read_bytes() == (repo / name).read_bytes()
    ours = subprocess.run(["git", "diff", "--cached"], cwd=clean, capture_output=True, text=True, check=True).stdout
    assert ours == patch
