"""Every event type has its own documented payload model, and what this release writes declares
every field: a rich editing run (baseline, Tester, Coder edit, verify, report) is checked whole."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from tests.workflow.support import call, fix_turns, run_workflow, say

from protoagent.events import CATALOG, Event
from protoagent.events.catalog import Payload, ToolEnded, WorkerStarted, type_of, undeclared_fields, validate_payload
from protoagent.events.queries import facts, last_fact

FIXTURES = Path(__file__).parent.parent / "fixtures"
RICH = [
    call("tester", "architect", task="propose regression cases for parse_date"),
    call("read_file", "tester", path="dates.py"),
    call("report_task", "tester", status="done", summary="one case: 2024-03-15"),
    call("coder", "architect", task="fix the swapped month/day in dates.py"),
    *fix_turns(),
    say("Fixed parse_date; the unittest check passes.", "architect"),
]


def _stored_payloads() -> list[tuple[str, dict[str, object]]]:
    db = sqlite3.connect(FIXTURES / "release-store.sqlite")
    rows = [(str(t), json.loads(p)) for t, p in db.execute("SELECT type, payload FROM events ORDER BY seq")]
    db.close()
    lines = (FIXTURES / "session-v1.jsonl").read_text().splitlines()
    return rows + [(e["type"], e["payload"]) for e in map(json.loads, lines)]


def test_every_event_type_has_its_own_documented_model() -> None:
    models = list(CATALOG.values())
    assert len(set(models)) == len(models), "two event types share one payload model"
    for name, model in CATALOG.items():
        assert model is not Payload and issubclass(model, Payload)
        assert model.__doc__ and model.__doc__ != Payload.__doc__, f"{name} has no documented model"
        assert type_of(model) == name


def test_every_event_of_a_rich_run_validates_with_no_undeclared_field(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, "fix the failing date parser test", RICH)
    assert run.json["status"] == "completed" and run.json["verified"], run.json
    agents = {e.agent for e in run.events}
    assert {"architect", "tester", "coder", "verifier"} <= agents
    for event in run.events:
        assert validate_payload(event.type, event.payload) is None
        assert undeclared_fields(event.type, event.payload) == [], (event.seq, event.type)
        assert type(event.typed_payload()) is CATALOG[event.type]
    # The typed accessor answers only for its own type, with the fields the writer put there.
    ended = [(e, f) for e, f in facts(run.events, ToolEnded) if f.tool == "run_check"]
    assert [f.data["phase"] for _, f in ended] == ["baseline", "verify"]
    assert all(e.fact(WorkerStarted) is None for e, _ in ended)
    started = last_fact(run.events, WorkerStarted)
    assert started is not None and started[1].role == "coder"


def test_a_previous_releases_payloads_validate_with_no_undeclared_field() -> None:
    for event_type, payload in _stored_payloads():
        assert undeclared_fields(event_type, payload) == [], event_type


def test_loading_tolerates_a_field_no_model_declares_and_refuses_a_missing_one() -> None:
    event = Event(seq=2, session_id="s_x", time=0.0, type="worker.started", payload={"role": "coder", "later": 1})
    assert validate_payload(event.type, event.payload) is None
    assert undeclared_fields(event.type, event.payload) == ["later"]
    fact = event.fact(WorkerStarted)
    assert fact is not None and fact.role == "coder" and fact.task == ""
    problem = validate_payload("worker.started", {"task": "x"})
    assert problem is not None and "role" in problem
    # Validated once per event; another event with the same session and seq has its own payload.
    assert event.fact(WorkerStarted) is fact
    other = event.model_copy(update={"payload": {"role": "tester"}})
    assert other.fact(WorkerStarted) == WorkerStarted(role="tester") and event.fact(WorkerStarted) is fact


@pytest.mark.parametrize("event_type", ["tool.ended", "model.completed"])
def test_nested_records_are_checked_for_undeclared_fields(event_type: str) -> None:
    payload: dict[str, object] = (
        {"call_id": "c", "tool": "t", "status": "ok", "output": "", "surprise": True}
        if event_type == "tool.ended"
        else {"text": "", "tool_calls": [{"id": "1", "name": "n", "arguments": {}, "extra": 1}]}
    )
    assert undeclared_fields(event_type, payload) in (["surprise"], ["tool_calls.extra"])
