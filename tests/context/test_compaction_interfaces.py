"""``/compact`` through the web API on a real server: the summary is an event, the next message follows it."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
from tests.web.support import running_server

from protoagent.events.messages import SUMMARY_MARK
from protoagent.testing import final_turn, make_repo, write_script


def wait_ended(client: httpx.Client, session_id: str, runs: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found: list[dict[str, Any]] = client.get(f"/api/sessions/{session_id}/events").json()["events"]
        if [e["type"] for e in found].count("run.ended") >= runs:
            return found
        time.sleep(0.05)
    raise AssertionError("the run did not end")


def test_the_web_compact_route_records_a_user_summary_that_the_next_message_follows(tmp_path: Path) -> None:
    make_repo(tmp_path / "repo", {"notes.md": "the parser must be strict\n"})
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            final_turn("We use the strict ISO parser.", role="architect"),
            final_turn("Asked: which parser. Decided: the strict ISO parser.", role="compaction"),
            final_turn("The strict ISO parser, as decided.", role="architect"),
        ],
    )
    with running_server(tmp_path) as server, server.client() as client:
        body = {"objective": "which parser do we use?", "repo": "repo", "model": f"scripted:{script}"}
        session_id = client.post("/api/runs", json={**body, "surface": "question"}).json()["session_id"]
        wait_ended(client, session_id, 1)
        refused = client.post(f"/api/sessions/{session_id}/compact", json={"focus": "x" * 501})
        assert refused.status_code == 400 and "focus" in refused.json()["error"]
        compacted = client.post(f"/api/sessions/{session_id}/compact", json={"focus": "the parser"})
        assert compacted.status_code == 200, compacted.text
        result = compacted.json()
        # The recorded model is a fresh scripted model here: its first turn is an architect one,
        # so the compaction request finds only the compaction turn it is meant for.
        assert (result["compacted"], result["method"], result["turns"]) == (True, "model", [1])
        assert result["summary"] == "Asked: which parser. Decided: the strict ISO parser."
        unknown = client.post("/api/sessions/s_nope/compact", json={})
        assert unknown.status_code == 404
        text = {"text": "what did we decide?", "surface": "question"}
        assert client.post(f"/api/sessions/{session_id}/messages", json=text).status_code == 200
        found = wait_ended(client, session_id, 2)
    (event,) = [e for e in found if e["type"] == "context.compacted"]
    assert (event["payload"]["trigger"], event["payload"]["focus"]) == ("user", "the parser")
    said = [e["payload"]["text"] for e in found if e["type"] == "user.message"]
    assert said == ["which parser do we use?", "what did we decide?"]
    assert SUMMARY_MARK not in said[-1]
