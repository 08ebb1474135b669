"""A preview server started in a web run answers on loopback while the run waits, and the
server's shutdown (which cancels the run) stops its whole process group."""

from __future__ import annotations

import time
import urllib.request
from pathlib import Path
from typing import Any

import httpx
from tests.processes.test_preview import SERVE, alive, free_port, group_members

from protoagent.testing import write_script

from .support import running_server


def approve_next(client: httpx.Client, session_id: str, tool: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        pending = client.get(f"/api/sessions/{session_id}/events").json()
        asked = [e for e in pending["events"] if e["type"] == "approval.requested"]
        waiting = [e for e in asked if e["payload"]["call_id"] in pending["pending"]]
        if waiting:
            assert waiting[0]["payload"]["tool"] == tool
            answer = {"decision": "allow", "session_id": session_id}
            client.post(f"/api/approvals/{waiting[0]['payload']['call_id']}", json=answer)
            return
        assert time.monotonic() < deadline, f"no approval for {tool} was asked"
        time.sleep(0.05)


def test_shutting_the_server_down_stops_a_preview_of_a_run_still_in_progress(tmp_path: Path) -> None:
    port = free_port()
    turns: list[dict[str, Any]] = [
        {
            "role": "assistant",
            "tool_calls": [{"name": "preview", "arguments": {"action": "start", "command": SERVE, "port": port}}],
        },
        {"role": "assistant", "tool_calls": [{"name": "shell", "arguments": {"command": "true"}}]},
        {"role": "assistant", "text": "done"},
    ]
    script = write_script(tmp_path / "turns.jsonl", turns)
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": "serve", "model": f"scripted:{script}", "mode": "work", "approval": "ask"}
        session_id = client.post("/api/runs", json=body).json()["session_id"]
        approve_next(client, session_id, "preview")
        deadline = time.monotonic() + 30
        while True:  # the shell call now waits for approval; the preview serves meanwhile
            events = client.get(f"/api/sessions/{session_id}/events").json()["events"]
            ended = [e["payload"] for e in events if e["type"] == "tool.ended" and e["payload"]["tool"] == "preview"]
            if ended:
                break
            assert time.monotonic() < deadline, "the preview did not start"
            time.sleep(0.05)
        pid = int(ended[0]["data"]["pid"])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
            assert response.status == 200
        assert client.get(f"/api/sessions/{session_id}/events").json()["running"] is True
    assert not alive(pid) and group_members(pid) == []
