"""The routes the page's views read: the session rows (status, repository, model, time, pending
approvals), the new-run choices, and a session's whole change as the diff git would write."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx

from protoagent.testing import make_repo

from .support import date_repo, fix_script, running_server


def wait_until_idle(client: httpx.Client, timeout: float = 60) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows: list[dict[str, Any]] = client.get("/api/sessions").json()
        if rows and not any(r["running"] for r in rows):
            return rows
        time.sleep(0.05)
    raise AssertionError("the run did not end")


def test_session_rows_carry_status_repository_model_time_and_pending_approvals(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": "fix it", "repo": "repo", "model": f"scripted:{script}", "surface": "editing"}
        session_id = client.post("/api/runs", json={**body, "approval": "ask"}).json()["session_id"]
        deadline = time.monotonic() + 30
        while not (row := client.get("/api/sessions").json()[0])["pending"]:
            assert time.monotonic() < deadline, "no approval was asked"
            time.sleep(0.05)
        assert row["status"] == "running" and row["pending"] == 1 and row["running"] is True
        assert client.get(f"/api/sessions/{session_id}/events").json()["pending"] == [
            server.hub.pending(session_id)[0].call_id
        ]
        client.post(f"/api/sessions/{session_id}/cancel")
        (row,) = wait_until_idle(client)
        assert row["status"] == "cancelled" and row["pending"] == 0
        assert row["repo"] == str(repo) and row["model"] == f"scripted:{script}" and row["runs"] == 1
        assert row["updated"] >= row["created"] and row["mode"] == "coding"


def test_options_offer_the_roots_repositories_and_known_models(tmp_path: Path) -> None:
    date_repo(tmp_path)
    make_repo(tmp_path / "a" / "b", {"x.py": "x = 1\n"})
    make_repo(tmp_path / "a" / "b" / "c" / "too-deep", {"x.py": "x = 1\n"})
    make_repo(tmp_path / ".hidden" / "repo", {"x.py": "x = 1\n"})
    with running_server(tmp_path) as server, server.client() as client:
        options = client.get("/api/options").json()
        assert [r["value"] for r in options["repos"]] == [".", "a/b", "repo"]
        assert options["repos"][2]["path"] == str(tmp_path / "repo")
        assert options["models"][0] == "local" and "openai:" in options["models"]


def test_changes_are_the_sessions_diff_from_its_log_even_after_the_tree_moved_on(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": "fix it", "repo": "repo", "model": f"scripted:{script}", "surface": "editing"}
        session_id = client.post("/api/runs", json={**body, "approval": "auto"}).json()["session_id"]
        wait_until_idle(client)
        (repo / "dates.py").write_text("changed by hand afterwards\n")
        changes = client.get(f"/api/sessions/{session_id}/changes").json()
        assert changes["files"] == [{"path": "dates.py", "status": "modified", "turns": [1], "recorded": True}]
        diff = changes["diff"]
        assert diff.startswith("diff --git a/dates.py b/dates.py\n") and "changed by hand" not in diff
        assert "-    return int(year), int(day), int(month)\n+    return int(year), int(month), int(day)\n" in diff
        assert client.get(f"/api/sessions/{session_id}/changes", params={"turn": 1}).json()["diff"] == diff
        refused = client.get(f"/api/sessions/{session_id}/changes", params={"turn": 2})
        assert refused.status_code == 400 and "not a user turn" in refused.json()["error"]
        assert client.get("/api/sessions/s_nowhere/changes").status_code == 404
