"""The session log and its stores: versioned, validated, crash-safe."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from protoagent.errors import SessionLoadError
from protoagent.events import FORMAT_VERSION, MemoryStore, SessionLog, SQLiteStore


def new_log(store, sid: str = "s_one") -> SessionLog:
    log = SessionLog(store, sid)
    log.append(
        "session.created",
        {"preset": "coding", "model": "scripted:x", "root": "/r", "approval_policy": "ask", "title": "demo"},
    )
    log.append("user.message", {"text": "hello"}, turn=1)
    return log


def test_sqlite_store_round_trips_events_identically(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.sqlite") as store:
        log = new_log(store)
        log.append("tool.ended", {"call_id": "c", "tool": "t", "status": "ok", "output": "é ✓", "data": {"n": 1}})
        written = log.events
    with SQLiteStore(tmp_path / "s.sqlite") as store:
        assert store.load("s_one") == written
        assert [s.session_id for s in store.list()] == ["s_one"]
        assert store.list()[0].event_count == 3 and store.list()[0].title == "demo"


def test_sqlite_store_uses_wal(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.sqlite"):
        mode = sqlite3.connect(tmp_path / "s.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_events_are_immutable(tmp_path: Path) -> None:
    log = new_log(MemoryStore())
    with pytest.raises(ValueError, match="frozen"):
        log.events[0].type = "user.message"  # type: ignore[misc]


def test_append_refuses_a_malformed_payload() -> None:
    log = new_log(MemoryStore())
    with pytest.raises(ValueError, match=r"user.message payload field 'text'"):
        log.append("user.message", {})
    with pytest.raises(ValueError, match="unknown event type"):
        log.append("made.up", {})
    assert len(log) == 2


def _corrupt(db: Path, sql: str, *params: object) -> None:
    con = sqlite3.connect(db)
    con.execute(sql, params)
    con.commit()
    con.close()


def test_future_version_session_is_refused_and_others_still_load(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    with SQLiteStore(db) as store:
        new_log(store, "s_old")
        new_log(store, "s_new")
    _corrupt(db, "UPDATE sessions SET format_version = ? WHERE session_id = 's_new'", FORMAT_VERSION + 1)
    with SQLiteStore(db) as store:
        with pytest.raises(SessionLoadError, match=r"'s_new'.*format version 2 is newer"):
            store.load("s_new")
        assert len(store.load("s_old")) == 2


def test_corrupted_payload_is_refused_naming_session_and_seq(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    with SQLiteStore(db) as store:
        new_log(store, "s_bad")
        new_log(store, "s_good")
    _corrupt(db, "UPDATE events SET payload = '{not json' WHERE session_id = 's_bad' AND seq = 2")
    with SQLiteStore(db) as store:
        with pytest.raises(SessionLoadError, match=r"'s_bad'.*seq 2.*not JSON"):
            store.load("s_bad")
        assert len(store.load("s_good")) == 2


def test_payload_missing_a_required_field_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    with SQLiteStore(db) as store:
        new_log(store, "s_bad")
    _corrupt(db, "UPDATE events SET payload = '{\"txt\": 1}' WHERE session_id = 's_bad' AND seq = 2")
    with SQLiteStore(db) as store, pytest.raises(SessionLoadError, match="field 'text'"):
        store.load("s_bad")


def test_missing_session_created_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    with SQLiteStore(db) as store:
        new_log(store, "s_x")
    _corrupt(db, "DELETE FROM events WHERE session_id = 's_x' AND seq = 1")
    with SQLiteStore(db) as store, pytest.raises(SessionLoadError, match=r"session\.created"):
        store.load("s_x")


def test_unknown_session_is_refused_with_its_id(tmp_path: Path) -> None:
    with SQLiteStore(tmp_path / "s.sqlite") as store, pytest.raises(SessionLoadError, match="'s_nope'"):
        store.load("s_nope")


WRITER = """
import sys, time
from protoagent.events import SQLiteStore, SessionLog
store = SQLiteStore(sys.argv[1])
log = SessionLog(store, "s_crash")
log.append("session.created", {"preset": "p", "model": "m", "root": "/", "approval_policy": "ask"})
print("ready", flush=True)
i = 0
while True:
    i += 1
    log.append("model.delta", {"text": "x" * 2000 + str(i)})
"""


def test_process_killed_mid_append_leaves_log_loadable_to_last_whole_event(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    with SQLiteStore(db) as store:
        events = store.load("s_crash")
    assert len(events) > 10
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert all(e.payload["text"].endswith(str(e.seq - 1)) for e in events[1:])


def test_memory_store_validates_like_sqlite() -> None:
    store = MemoryStore()
    log = new_log(store)
    assert store.load(log.session_id) == log.events
    with pytest.raises(SessionLoadError):
        store.load("s_missing")


def test_sample_log_of_version_1_keeps_loading(tmp_path: Path) -> None:
    fixture = Path(__file__).parent.parent / "fixtures" / "session-v1.jsonl"
    rows = [json.loads(line) for line in fixture.read_text().splitlines()]
    store = MemoryStore()
    from protoagent.events import Event

    for row in rows:
        store.append(Event.model_validate(row))
    events = store.load(rows[0]["session_id"])
    assert events[0].type == "session.created"
    assert events[-1].type == "run.ended" and events[-1].payload["status"] == "completed"
    assert {"tool.ended", "approval.decided", "task.updated", "evidence.reported"} <= {e.type for e in events}
