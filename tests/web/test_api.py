"""The JSON API against a real server: runs, approvals, the SSE stream, cancellation."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import httpx

from protoagent.testing import write_script

from .support import BUGGY, FIXED, date_repo, fix_script, running_server

OBJECTIVE = "fix the failing date parser test"


def events(client: httpx.Client, session_id: str) -> list[dict[str, Any]]:
    response = client.get(f"/api/sessions/{session_id}/events")
    assert response.status_code == 200, response.text
    found: list[dict[str, Any]] = response.json()["events"]
    return found


def pending(found: list[dict[str, Any]]) -> list[str]:
    """Calls asked about and not yet decided (a resumed session may reuse a call id)."""
    waiting: dict[str, None] = {}
    for event in found:
        if event["type"] == "approval.requested":
            waiting[event["payload"]["call_id"]] = None
        elif event["type"] == "approval.decided":
            waiting.pop(event["payload"]["call_id"], None)
    return list(waiting)


def answer_until_ended(
    client: httpx.Client, session_id: str, decision: str, timeout: float = 60
) -> list[dict[str, Any]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = events(client, session_id)
        if found[-1]["type"] == "run.ended":
            return found
        for call_id in pending(found):
            client.post(f"/api/approvals/{call_id}", json={"decision": decision, "session_id": session_id})
        time.sleep(0.05)
    raise AssertionError("the run did not end")


def test_run_started_through_the_api_is_approved_and_reports_evidence(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    with running_server(tmp_path) as server, server.client() as client:
        body = {
            "objective": OBJECTIVE,
            "repo": "repo",
            "model": f"scripted:{script}",
            "approval": "ask",
            "surface": "editing",
        }
        started = client.post("/api/runs", json=body)
        assert started.status_code == 200, started.text
        session_id = started.json()["session_id"]
        found = answer_until_ended(client, session_id, "allow")
        evidence = next(e["payload"] for e in found if e["type"] == "evidence.reported")
        assert evidence["applied"] and evidence["verified"] and evidence["criteria_supported"], evidence
        assert (repo / "dates.py").read_text() == FIXED
        listed = client.get("/api/sessions").json()
        assert [s["session_id"] for s in listed] == [session_id] and listed[0]["running"] is False
    assert BUGGY != FIXED


def test_stream_replays_the_log_then_delivers_live_events(tmp_path: Path) -> None:
    date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": OBJECTIVE, "repo": "repo", "model": f"scripted:{script}", "surface": "editing"}
        session_id = client.post("/api/runs", json=body).json()["session_id"]
        seen: list[dict[str, Any]] = []
        states: list[bool] = []
        with client.stream("GET", f"/api/sessions/{session_id}/stream") as stream:
            kind = ""
            for line in stream.iter_lines():
                if line.startswith("event: "):
                    kind = line[7:]
                elif line.startswith("data: ") and kind == "state":
                    states.append(json.loads(line[6:])["running"])
                elif line.startswith("data: "):
                    event = json.loads(line[6:])
                    seen.append(event)
                    if event["type"] == "approval.requested":
                        client.post(f"/api/approvals/{event['payload']['call_id']}", json={"decision": "allow"})
                    if event["type"] == "run.ended":
                        break
        assert [e["seq"] for e in seen] == list(range(1, len(seen) + 1))
        assert seen == events(client, session_id)
        assert states[0] is True
        with client.stream("GET", f"/api/sessions/{session_id}/stream", headers={"Last-Event-ID": "3"}) as again:
            first = next(line for line in again.iter_lines() if line.startswith("id: "))
        assert first == "id: 4"


def test_a_denial_from_the_api_leaves_the_file_unchanged_and_the_model_sees_the_reason(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    script = fix_script(tmp_path / "turns.jsonl")
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": OBJECTIVE, "repo": "repo", "model": f"scripted:{script}", "surface": "editing"}
        session_id = client.post("/api/runs", json=body).json()["session_id"]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = events(client, session_id)
            if found[-1]["type"] == "run.ended":
                break
            for call_id in pending(found):
                tool = next(
                    e for e in found if e["type"] == "approval.requested" and e["payload"]["call_id"] == call_id
                )
                decision = "deny" if tool["payload"]["tool"] == "edit_file" else "allow"
                client.post(f"/api/approvals/{call_id}", json={"decision": decision, "reason": "keep dates.py as is"})
            time.sleep(0.05)
        edit = next(e for e in found if e["type"] == "tool.ended" and e["payload"]["tool"] == "edit_file")
        assert edit["payload"]["status"] == "denied" and "keep dates.py as is" in edit["payload"]["output"]
        assert (repo / "dates.py").read_text() == BUGGY


def test_bad_requests_get_one_line_errors(tmp_path: Path) -> None:
    date_repo(tmp_path)
    with running_server(tmp_path) as server, server.client() as client:
        unknown = client.post("/api/sessions/s_missing/messages", json={"text": "go on"})
        assert unknown.status_code == 404 and "cannot be loaded" in unknown.json()["error"]
        empty = client.post("/api/runs", json={"objective": "", "repo": "repo"})
        assert empty.status_code == 400 and "objective" in empty.json()["error"]
        bad_model = client.post("/api/runs", json={"objective": "x", "repo": "repo", "model": "nosuch:thing"})
        assert bad_model.status_code == 400 and "nosuch" in bad_model.json()["error"]
        bad_mode = client.post("/api/runs", json={"objective": "x", "repo": "repo", "mode": "play"})
        assert bad_mode.status_code == 400 and "mode" in bad_mode.json()["error"]


def test_allow_for_this_session_from_the_api_covers_the_next_edit_of_the_same_file(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    commented = "# Dates.\n" + FIXED
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            {"role": "architect", "tool_calls": [{"name": "coder", "arguments": {"task": "fix dates.py"}}]},
            edit_turn(
                BUGGY, "    return int(year), int(day), int(month)\n", "    return int(year), int(month), int(day)\n"
            ),
            edit_turn(FIXED, "def parse_date", "# Dates.\ndef parse_date"),
            {
                "role": "coder",
                "tool_calls": [{"name": "report_task", "arguments": {"status": "done", "summary": "ok"}}],
            },
            {"role": "coder", "text": "fixed"},
            {"role": "architect", "text": "Fixed."},
        ],
    )
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": OBJECTIVE, "repo": "repo", "model": f"scripted:{script}", "surface": "editing"}
        session_id = client.post("/api/runs", json=body).json()["session_id"]
        asked: list[str] = []
        deadline = time.monotonic() + 60
        while (found := events(client, session_id))[-1]["type"] != "run.ended":
            assert time.monotonic() < deadline, "the run did not end"
            for call_id in pending(found):
                request = next(
                    e for e in found if e["type"] == "approval.requested" and e["payload"]["call_id"] == call_id
                )
                asked.append(request["payload"]["tool"])
                scope = "session" if request["payload"]["tool"] == "edit_file" else "once"
                client.post(f"/api/approvals/{call_id}", json={"decision": "allow", "scope": scope})
            time.sleep(0.05)
    assert asked.count("edit_file") == 1
    assert (repo / "dates.py").read_text() == commented
    sources = [
        e["payload"]["source"] for e in found if e["type"] == "approval.decided" and e["payload"]["tool"] == "edit_file"
    ]
    assert sources == ["answerer", "rule"]
    rules = [e["payload"]["rule"] for e in found if e["type"] == "approval.rule_added"]
    assert rules == [{"tool": "edit_file", "effect": "write", "paths": ["dates.py"], "command": ""}]


def edit_turn(current: str, old: str, new: str) -> dict[str, Any]:
    revision = hashlib.sha256(current.encode()).hexdigest()
    arguments = {"path": "dates.py", "old": old, "new": new, "expected_revision": revision}
    return {"role": "coder", "tool_calls": [{"name": "edit_file", "arguments": arguments}]}


def run_to_end(
    client: httpx.Client, session_id: str, answers: dict[str, str], asked: list[str]
) -> list[dict[str, Any]]:
    """Answer every pending approval (scope by tool) until the session's latest run has ended."""
    deadline = time.monotonic() + 60
    while True:
        found = events(client, session_id)
        if found[-1]["type"] == "run.ended" and not client.get("/api/sessions").json()[-1]["running"]:
            return found
        assert time.monotonic() < deadline, f"the run did not end: {[e['type'] for e in found[-5:]]}"
        for call_id in pending(found):
            requests = [e for e in found if e["type"] == "approval.requested" and e["payload"]["call_id"] == call_id]
            tool = requests[-1]["payload"]["tool"]
            asked.append(tool)
            body = {"decision": "allow", "scope": answers.get(tool, "once"), "session_id": session_id}
            client.post(f"/api/approvals/{call_id}", json=body)
        time.sleep(0.05)


def test_continuing_a_session_resumes_it_and_keeps_its_session_rules(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    first = write_script(
        tmp_path / "first.jsonl",
        [
            {"role": "architect", "tool_calls": [{"name": "coder", "arguments": {"task": "fix dates.py"}}]},
            edit_turn(
                BUGGY, "    return int(year), int(day), int(month)\n", "    return int(year), int(month), int(day)\n"
            ),
            {
                "role": "coder",
                "tool_calls": [{"name": "report_task", "arguments": {"status": "done", "summary": "ok"}}],
            },
            {"role": "coder", "text": "fixed"},
            {"role": "architect", "text": "Fixed."},
        ],
    )
    second = write_script(
        tmp_path / "second.jsonl",
        [
            {"role": "architect", "tool_calls": [{"name": "coder", "arguments": {"task": "add a header"}}]},
            edit_turn(FIXED, "def parse_date", "# Dates.\ndef parse_date"),
            {
                "role": "coder",
                "tool_calls": [{"name": "report_task", "arguments": {"status": "done", "summary": "ok"}}],
            },
            {"role": "coder", "text": "added"},
            {"role": "architect", "text": "Added the header."},
        ],
    )
    asked: list[str] = []
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": OBJECTIVE, "repo": "repo", "model": f"scripted:{first}", "surface": "editing"}
        session_id = client.post("/api/runs", json=body).json()["session_id"]
        run_to_end(client, session_id, {"edit_file": "session"}, asked)
        more = {"text": "add a '# Dates.' header to dates.py", "model": f"scripted:{second}", "surface": "editing"}
        continued = client.post(f"/api/sessions/{session_id}/messages", json=more)
        assert continued.status_code == 200, continued.text
        assert continued.json() == {"session_id": session_id}
        found = run_to_end(client, session_id, {}, asked)
    assert (repo / "dates.py").read_text() == "# Dates.\n" + FIXED
    assert asked.count("edit_file") == 1, asked
    types = [e["type"] for e in found]
    assert types.count("session.created") == 1 and types.count("session.resumed") == 1
    assert types.count("run.ended") == 2 and [e["seq"] for e in found] == list(range(1, len(found) + 1))
    edits = [
        e["payload"]["source"] for e in found if e["type"] == "approval.decided" and e["payload"]["tool"] == "edit_file"
    ]
    assert edits == ["answerer", "rule"]
