"""The PostgreSQL session store on a real server: the store contract, and many workers at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from protoagent.errors import SessionLoadError
from protoagent.events.postgres_store import PostgresStore, migrate
from protoagent.events.types import Event
from protoagent.testing.postgres import missing_reason, temporary_postgres

REPO_ROOT = Path(__file__).resolve().parents[2]
SUITE = REPO_ROOT / "evals" / "smoke.jsonl"
EXE = [sys.executable, "-m", "protoagent"]

pytestmark = pytest.mark.skipif(missing_reason() is not None, reason=f"no PostgreSQL here: {missing_reason()}")


@pytest.fixture(scope="module")
def pg_url() -> Iterator[str]:
    with temporary_postgres() as url:
        yield url


def created(session_id: str, seq: int = 1) -> Event:
    payload = {"preset": "p", "model": "m", "root": "/r", "approval_policy": "deny", "title": "t"}
    return Event(seq=seq, session_id=session_id, time=1.0 + seq, type="session.created", payload=payload)


def message(session_id: str, seq: int, text: str) -> Event:
    return Event(seq=seq, session_id=session_id, time=1.0 + seq, type="user.message", payload={"text": text})


def test_postgres_store_round_trips_a_log_byte_for_byte(pg_url: str) -> None:
    with PostgresStore(pg_url) as store:
        events = [created("rt"), message("rt", 2, "héllo"), message("rt", 3, '{"b": 1, "a": 2}')]
        store.append_many(events)
        assert store.load("rt") == events
        assert [s.event_count for s in store.list() if s.session_id == "rt"] == [3]


def test_postgres_store_refuses_a_duplicated_event_and_keeps_the_log(pg_url: str) -> None:
    import psycopg

    with PostgresStore(pg_url) as store:
        store.append_many([created("dup"), message("dup", 2, "one")])
        with pytest.raises(psycopg.errors.UniqueViolation):
            store.append(message("dup", 2, "again"))
        assert [e.payload.get("text") for e in store.load("dup")][1:] == ["one"]


def test_postgres_append_batch_is_all_or_nothing(pg_url: str) -> None:
    import psycopg

    with PostgresStore(pg_url) as store:
        store.append(created("batch"))
        with pytest.raises(psycopg.errors.UniqueViolation):
            store.append_many([message("batch", 2, "kept?"), message("batch", 2, "clash")])
        assert len(store.load("batch")) == 1


def test_postgres_load_refuses_a_gap_and_an_unknown_session(pg_url: str) -> None:
    with PostgresStore(pg_url) as store:
        store.append_many([created("gap"), message("gap", 3, "skipped two")])
        with pytest.raises(SessionLoadError, match="gap"):
            store.load("gap")
        with pytest.raises(SessionLoadError, match="no such session"):
            store.load("nope")


def test_migrate_is_idempotent_and_concurrent_safe(pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as a, psycopg.connect(pg_url, autocommit=True) as b:
        assert migrate(a) == migrate(b) == 1


def test_unreachable_postgres_store_is_one_clear_line(tmp_path: Path) -> None:
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path), "PROTOAGENT_STORE": "postgresql://nobody@127.0.0.1:1/x"}
    done = subprocess.run([*EXE, "sessions", "list"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "cannot connect to the session store" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_four_workers_share_one_postgres_store_without_lost_or_duplicated_events(tmp_path: Path, pg_url: str) -> None:
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    env.pop("PROTOAGENT_STORE", None)
    runs = {}
    for name, store in (("pg", pg_url), ("sqlite", str(tmp_path / "s.sqlite"))):
        out = tmp_path / name
        done = subprocess.run(
            [*EXE, "batch", str(SUITE), "--out", str(out), "--workers", "4", "--store", store],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        runs[name] = {r["id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())}
    with PostgresStore(pg_url) as pg:
        from protoagent.events.sqlite_store import SQLiteStore

        with SQLiteStore(tmp_path / "s.sqlite") as lite:
            for task_id, row in runs["pg"].items():
                ours = pg.load(row["session_id"])
                reference = lite.load(runs["sqlite"][task_id]["session_id"])
                assert [e.seq for e in ours] == list(range(1, len(ours) + 1))
                assert [(e.type, e.agent) for e in ours] == [(e.type, e.agent) for e in reference], task_id
    listed = subprocess.run(
        [*EXE, "sessions", "list", "--json"], env={**env, "PROTOAGENT_STORE": pg_url}, capture_output=True, text=True
    )
    assert listed.returncode == 0, listed.stderr
    ids = {s["session_id"] for s in json.loads(listed.stdout)}
    assert {r["session_id"] for r in runs["pg"].values()} <= ids
