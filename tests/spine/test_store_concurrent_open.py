"""Processes that open one new session store at the same moment (batch workers) all succeed."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from protoagent.events import SQLiteStore

_WORKER = """
import sys, time
from pathlib import Path
from protoagent.events import SessionLog, SQLiteStore
start = float(sys.argv[2])
time.sleep(max(0.0, start - time.time()))
with SQLiteStore(Path(sys.argv[1])) as store:
    log = SessionLog(store, "s_" + sys.argv[3])
    log.append(
        "session.created",
        {"preset": "coding", "model": "scripted:x", "root": "/r", "approval_policy": "ask", "title": sys.argv[3]},
    )
"""


def test_processes_opening_one_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    for attempt in range(3):
        db = tmp_path / f"home{attempt}" / "sessions.sqlite"
        start = time.time() + 1.0
        workers = [
            subprocess.Popen(
                [sys.executable, "-c", _WORKER, str(db), str(start), f"w{attempt}_{i}"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for i in range(6)
        ]
        for worker in workers:
            _, err = worker.communicate(timeout=60)
            assert worker.returncode == 0, err
        with SQLiteStore(db) as store:
            assert len(store.list()) == 6
