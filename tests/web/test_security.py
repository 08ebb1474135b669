"""Who may use the server and what a request may reach."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from protoagent.errors import ConfigError
from protoagent.interfaces.web.server import web_config

from .support import date_repo, running_server


def test_a_server_always_has_a_token_and_a_weak_one_is_refused(tmp_path: Path) -> None:
    for host in ("127.0.0.1", "0.0.0.0"):
        config = web_config(host, None, [tmp_path])
        assert len(config.token) >= 40, "a token is generated at start when none is given"
    assert web_config("127.0.0.1", None, [tmp_path]).token != web_config("127.0.0.1", None, [tmp_path]).token
    with pytest.raises(ConfigError, match="at least 16 printable"):
        web_config("127.0.0.1", "short", [tmp_path])


def test_another_local_user_without_the_token_cannot_start_a_run_or_read_a_file_on_loopback(tmp_path: Path) -> None:
    canary = tmp_path / "private.txt"
    canary.write_text("canary-0600-contents")
    canary.chmod(0o600)
    repo = date_repo(tmp_path)
    with running_server(tmp_path) as server, server.client("") as anonymous:
        for path in ("/api/sessions", "/", "/static/app.js", "/api/sessions/s_x/stream", "/api/sessions/s_x/events"):
            response = anonymous.get(path)
            assert response.status_code == 401, path
            assert "token" in response.json()["error"]
        run = {"objective": f"!cat {canary}", "repo": str(repo), "approval": "auto"}
        started = anonymous.post("/api/runs", json=run)
        assert started.status_code == 401 and "canary" not in started.text
        assert anonymous.post("/api/approvals/c1", json={"decision": "allow"}).status_code == 401
        with server.client("wrong-token-0123456789") as wrong:
            assert wrong.get("/api/sessions").status_code == 401
        assert server.store.list() == [], "nothing was recorded, so nothing ran"


def test_401_without_the_token_when_bound_to_a_non_loopback_address(tmp_path: Path) -> None:
    with running_server(tmp_path, host="0.0.0.0", token="s3cret-token-0123456789") as server:
        with server.client("") as anonymous:
            for path in ("/api/sessions", "/", "/static/app.js", "/api/sessions/s_x/stream"):
                response = anonymous.get(path)
                assert response.status_code == 401, path
                assert "token" in response.json()["error"]
            assert anonymous.post("/api/runs", json={"objective": "x"}).status_code == 401
        with server.client("wrong") as wrong:
            assert wrong.get("/api/sessions").status_code == 401
        with server.client("s3cret-token-0123456789") as bearer:
            assert bearer.get("/api/sessions").status_code == 200
        with httpx.Client(base_url=server.url) as browser:
            login = browser.get("/?token=s3cret-token-0123456789", follow_redirects=False)
            assert login.status_code == 303 and login.headers["location"] == "/"
            assert browser.get("/api/sessions").status_code == 200  # the cookie the page set
        assert httpx.get(server.url + "/?token=caf\u00e9-not-ascii-token").status_code == 401


def test_sessions_of_repositories_outside_the_roots_are_not_served(tmp_path: Path) -> None:
    from protoagent.events import SessionLog
    from protoagent.events.sqlite_store import SQLiteStore

    root, elsewhere = tmp_path / "allowed", tmp_path / "elsewhere"
    root.mkdir()
    elsewhere.mkdir()
    shared = tmp_path / "home" / "sessions.sqlite"
    with SQLiteStore(shared) as store:
        for session_id, where in (("s_inside", root), ("s_outside", elsewhere)):
            log = SessionLog(store, session_id)
            created = {"preset": "p", "model": "m", "root": str(where), "approval_policy": "ask"}
            log.append("session.created", created)
            log.append("user.message", {"text": f"secret of {session_id}"})
    with running_server(root, store_path=shared) as server, server.client() as client:
        assert [s["session_id"] for s in client.get("/api/sessions").json()] == ["s_inside"]
        assert client.get("/api/sessions/s_inside/events").status_code == 200
        for response in (
            client.get("/api/sessions/s_outside/events"),
            client.get("/api/sessions/s_outside/stream"),
            client.post("/api/sessions/s_outside/messages", json={"text": "go on", "approval": "auto"}),
            client.post("/api/sessions/s_outside/cancel"),
        ):
            assert response.status_code == 404, response.text
            assert "secret of" not in response.text
        assert len(server.store.load("s_outside")) == 2, "nothing was appended to it"


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


def test_a_server_bound_to_another_loopback_address_answers_on_it(tmp_path: Path) -> None:
    with running_server(tmp_path, host="127.0.0.2") as server, server.client() as client:
        assert server.url.startswith("http://127.0.0.2:")
        assert client.get("/api/sessions").status_code == 200
        assert client.get("/api/sessions", headers={"Host": "localhost"}).status_code == 200
        for rebound in ("127.0.0.2.evil.example", "evil.example", "10.0.0.1"):
            assert client.get("/api/sessions", headers={"Host": rebound}).status_code == 403, rebound


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


def test_an_mcp_prompt_run_from_the_web_does_not_start_an_untrusted_repository_server_or_hang(
    tmp_path: Path,
) -> None:
    import json
    import sys

    repo = date_repo(tmp_path)
    server_script = "import pathlib\npathlib.Path('started.txt').write_text('ran')\n"
    (repo / "srv.py").write_text(server_script)
    (repo / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"docs": {"command": sys.executable, "args": ["srv.py"]}}})
    )
    with running_server(tmp_path, mcp=True) as server, server.client() as client:
        for approval in ("ask", "auto", "deny"):
            body = {"objective": "/mcp:docs:review dates.py", "repo": str(repo), "approval": approval}
            started = time.monotonic()
            response = client.post("/api/runs", json=body)
            assert time.monotonic() - started < 20, "the request did not hang on a question nobody sees"
            assert response.status_code == 400 and "MCP server 'docs' was not started" in response.json()["error"]
        assert not (repo / "started.txt").exists(), "the repository's server never ran"
        assert client.get("/api/sessions").json() == []
