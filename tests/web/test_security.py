"""Who may use the server and what a request may reach."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from protoagent.errors import ConfigError
from protoagent.interfaces.web.server import web_config

from .support import date_repo, running_server


def test_non_loopback_without_token_refuses_to_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="without a token"):
        web_config("0.0.0.0", None, [tmp_path])
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    result = subprocess.run(
        [sys.executable, "-m", "protoagent", "serve", "--host", "0.0.0.0", "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2 and "without a token" in result.stderr and "Traceback" not in result.stderr


def test_401_without_the_token_when_bound_to_a_non_loopback_address(tmp_path: Path) -> None:
    with running_server(tmp_path, host="0.0.0.0", token="s3cret-token") as server:
        with server.client() as anonymous:
            for path in ("/api/sessions", "/", "/static/app.js", "/api/sessions/s_x/stream"):
                response = anonymous.get(path)
                assert response.status_code == 401, path
                assert "token" in response.json()["error"]
            assert anonymous.post("/api/runs", json={"objective": "x"}).status_code == 401
        with server.client("wrong") as wrong:
            assert wrong.get("/api/sessions").status_code == 401
        with server.client("s3cret-token") as bearer:
            assert bearer.get("/api/sessions").status_code == 200
        with httpx.Client(base_url=server.url) as browser:
            login = browser.get("/?token=s3cret-token", follow_redirects=False)
            assert login.status_code == 303 and login.headers["location"] == "/"
            assert browser.get("/api/sessions").status_code == 200  # the cookie the page set


def test_repo_outside_the_allowed_roots_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "allowed"
    root.mkdir()
    outside = date_repo(tmp_path / "elsewhere")
    (root / "escape").symlink_to(outside)
    with running_server(root) as server, server.client() as client:
        for repo in (str(outside), "../elsewhere/repo", "escape"):
            response = client.post("/api/runs", json={"objective": "list files", "repo": repo, "model": "scripted:x"})
            assert response.status_code == 400, repo
            assert "outside the allowed roots" in response.json()["error"]
        assert client.get("/api/sessions").json() == []


def test_approval_endpoint_cannot_approve_a_call_that_is_not_pending(tmp_path: Path) -> None:
    with running_server(tmp_path) as server, server.client() as client:
        response = client.post("/api/approvals/call_1", json={"decision": "allow"})
        assert response.status_code == 409 and "not waiting for approval" in response.json()["error"]
        bad = client.post("/api/approvals/call_1", json={"decision": "maybe"})
        assert bad.status_code == 400 and "decision" in bad.json()["error"]


def test_requests_cannot_reach_files_beside_the_page(tmp_path: Path) -> None:
    with running_server(tmp_path) as server, server.client() as client:
        assert client.get("/static/app.js").status_code == 200
        for path in ("/static/__init__.py", "/static/..%2Froutes.py", "/static/../routes.py"):
            assert client.get(path).status_code == 404, path
        assert client.get("/api/sessions/..%2F..%2Fetc/events").status_code in (400, 404)


def test_other_origins_and_rebound_host_names_are_refused(tmp_path: Path) -> None:
    with running_server(tmp_path) as server, server.client() as client:
        cross = client.post("/api/runs", json={"objective": "x"}, headers={"Origin": "http://evil.example"})
        assert cross.status_code == 403
        rebound = client.get("/api/sessions", headers={"Host": "evil.example"})
        assert rebound.status_code == 403


def test_cancel_stops_the_runs_processes(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    marker = "987.654"
    with running_server(tmp_path) as server, server.client() as client:
        started = client.post(
            "/api/runs", json={"objective": f"!sleep {marker}", "repo": str(repo), "approval": "auto"}
        )
        assert started.status_code == 200, started.text
        session_id = started.json()["session_id"]
        _wait_for(lambda: _processes_with(marker), "the command to start")
        cancelled = client.post(f"/api/sessions/{session_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["cancelled"] is True
        _wait_for(lambda: not _processes_with(marker), "the command to stop")
        assert client.post(f"/api/sessions/{session_id}/cancel").status_code == 409


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _wait_for(condition: object, what: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if callable(condition) and condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")
