"""The SDK's checkpoint calls (what ACP and other programs use): the same rewind, diff and fork."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.checkpoints.support import three_turn_session

from protoagent import RewindRefused, fork_session, open_store, rewind_session, session_changes, unified_diff


def test_sdk_rewind_restores_files_and_refuses_outside_changes(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    with open_store(home) as store:
        plan = rewind_session(store, sid, 2, verified=False, scope="both")
        assert [r.path for r in plan.restores] == ["c.py"] and plan.hidden_turns == (3,)
        assert (repo / "c.py").read_text() == "C = 1\n"
        assert "+A = 3" in unified_diff(session_changes(store.load(sid)))
        (repo / "a.py").write_text("A = 'mine'\n")
        with pytest.raises(RewindRefused) as refused:
            rewind_session(store, sid, 0, verified=False, scope="code")
        assert [c.path for c in refused.value.conflicts] == ["a.py"]
        assert fork_session(store, sid, 1) != sid
