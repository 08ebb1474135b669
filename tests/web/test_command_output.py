"""A command's output reaches the page while it runs, and a cancelled command ends in the log
with the output it had produced (``tool.ended``, marked cancelled), not as "running" for ever."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from protoagent.testing import make_repo

from .support import date_repo, running_server


def wait_for(condition: Callable[[], Any], what: str, timeout: float = 20) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def events(client: httpx.Client, session_id: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = client.get(f"/api/sessions/{session_id}/events").json()["events"]
    return found


def shell_call(client: httpx.Client, session_id: str) -> str | None:
    started = [e for e in events(client, session_id) if e["type"] == "tool.started" and e["payload"]["tool"] == "shell"]
    return str(started[0]["payload"]["call_id"]) if started else None


def test_a_running_commands_output_is_readable_live_and_a_cancelled_one_records_tool_ended_with_it(
    tmp_path: Path,
) -> None:
    repo = date_repo(tmp_path)
    command = "!for i in 1 2 3; do echo line-$i; done; echo partial-output-marker; sleep 987.321"
    with running_server(tmp_path) as server, server.client() as client:
        started = client.post("/api/runs", json={"objective": command, "repo": str(repo), "approval": "auto"})
        assert started.status_code == 200, started.text
        session_id = started.json()["session_id"]
        call_id = wait_for(lambda: shell_call(client, session_id), "the shell call to start")
        url = f"/api/sessions/{session_id}/calls/{call_id}/output"

        def marker_seen() -> dict[str, Any] | None:
            read: dict[str, Any] = client.get(url, params={"after": 0}).json()
            return read if "partial-output-marker" in read["text"] else None

        live = wait_for(marker_seen, "the output to show while the command runs")
        assert live["running"] is True and live["text"].startswith("line-1\nline-2\nline-3\n")
        again = client.get(url, params={"after": live["next"]}).json()
        assert again["text"] == "" and again["next"] == live["next"], "reading from the end shows nothing new"
        assert not [e for e in events(client, session_id) if e["type"] == "tool.ended"], "still running"

        assert client.post(f"/api/sessions/{session_id}/cancel").status_code == 200
        found = events(client, session_id)
        ended = [e["payload"] for e in found if e["type"] == "tool.ended" and e["payload"]["call_id"] == call_id]
        assert len(ended) == 1, "a cancelled command ends in the log"
        assert ended[0]["status"] == "error" and ended[0]["data"]["cancelled"] is True
        assert ended[0]["output"].startswith("cancelled: the run was stopped while shell ran")
        assert "partial-output-marker" in ended[0]["output"]
        assert found[-1]["type"] == "run.ended" and found[-1]["payload"]["status"] == "cancelled"
        assert client.get(url).json()["running"] is False


def test_live_output_of_a_session_outside_the_roots_is_refused(tmp_path: Path) -> None:
    with running_server(tmp_path) as server, server.client() as client:
        response = client.get("/api/sessions/s_nowhere/calls/c_1/output")
        assert response.status_code == 404 and "no such session" in response.json()["error"]
        assert client.get("/api/sessions/..%2Fx/calls/c_1/output").status_code in (400, 404)


def test_a_running_checks_output_is_readable_live_and_a_cancelled_check_keeps_it(tmp_path: Path) -> None:
    slow = (
        "import time\nimport unittest\n\n\nclass T(unittest.TestCase):\n    def test_slow(self):\n"
        "        print('check-partial-marker', flush=True)\n        time.sleep(987.6)\n"
    )
    repo = make_repo(tmp_path / "repo", {"test_slow.py": slow})
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": "run the tests", "repo": str(repo), "approval": "auto", "surface": "verification"}
        session_id = client.post("/api/runs", json=body).json()["session_id"]

        def check_call() -> str | None:
            found = events(client, session_id)
            started = [e for e in found if e["type"] == "tool.started" and e["payload"]["tool"] == "run_check"]
            return str(started[0]["payload"]["call_id"]) if started else None

        call_id = wait_for(check_call, "the check to start")
        url = f"/api/sessions/{session_id}/calls/{call_id}/output"
        wait_for(lambda: "check-partial-marker" in client.get(url).json()["text"], "the check's output to show")
        assert client.post(f"/api/sessions/{session_id}/cancel").status_code == 200
        found = events(client, session_id)
        ended = [e["payload"] for e in found if e["type"] == "tool.ended" and e["payload"]["call_id"] == call_id]
        assert len(ended) == 1 and ended[0]["data"]["cancelled"] is True
        assert ended[0]["data"]["check_id"] == "unittest" and "check-partial-marker" in ended[0]["output"]
