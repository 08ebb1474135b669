"""The web API rewinds and forks a session like the CLI, and answers a refusal with its conflicts."""

from __future__ import annotations

from pathlib import Path

from tests.checkpoints.support import three_turn_session
from tests.web.support import running_server


def test_web_rewind_restores_files_and_a_refusal_is_409_with_the_conflicts(tmp_path: Path) -> None:
    home, repo, sid = three_turn_session(tmp_path)
    with running_server(tmp_path, store_path=home / "sessions.sqlite") as server, server.client() as client:
        done = client.post(f"/api/sessions/{sid}/rewind", json={"to": 2, "scope": "code"})
        assert done.status_code == 200, done.text
        assert [r["path"] for r in done.json()["restored"]] == ["c.py"]
        assert (repo / "c.py").read_text() == "C = 1\n"
        (repo / "a.py").write_text("A = 'mine'\n")
        refused = client.post(f"/api/sessions/{sid}/rewind", json={"to": 0})
        assert refused.status_code == 409 and refused.json()["conflicts"][0]["path"] == "a.py"
        assert (repo / "a.py").read_text() == "A = 'mine'\n"
        bad = client.post(f"/api/sessions/{sid}/rewind", json={"to": -1})
        assert bad.status_code == 400 and "error" in bad.json()
        forked = client.post(f"/api/sessions/{sid}/fork", json={"to": 1})
        assert forked.status_code == 200 and forked.json()["session_id"] != sid
