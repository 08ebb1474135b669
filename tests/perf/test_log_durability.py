"""A writer killed with SIGKILL mid-session leaves a SQLite log that loads up to its last whole
event, and every event whose ``append`` had returned is in it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from protoagent.events import SQLiteStore, derive_messages

WRITER = textwrap.dedent(
    """
    import sys
    from protoagent.events import SessionLog, SQLiteStore

    store = SQLiteStore(sys.argv[1])
    log = SessionLog(store, "s_crash")
    log.append("session.created", {"preset": "p", "model": "m", "root": "/r", "approval_policy": "auto"})
    big = "x" * 20_000
    step = 0
    while True:
        step += 1
        log.append("model.requested", {"provider": "scripted", "model": "m"}, turn=1, step=step)
        call = {"id": f"c{step}", "name": "shell", "arguments": {"command": "echo hi"}}
        log.append("model.completed", {"text": "", "tool_calls": [call]}, turn=1, step=step)
        log.append("tool.started", {"call_id": f"c{step}", "tool": "shell", "arguments": call["arguments"]},
                   turn=1, step=step)
        log.append("tool.ended", {"call_id": f"c{step}", "tool": "shell", "status": "ok", "output": big},
                   turn=1, step=step)
        print(len(log), flush=True)
    """
)


def test_a_killed_writer_leaves_the_log_loadable_with_every_appended_event(tmp_path: Path) -> None:
    db = tmp_path / "crash.sqlite"
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db)], stdout=subprocess.PIPE, text=True, env={**os.environ}
    )
    assert writer.stdout is not None
    reported = 0
    try:
        for line in writer.stdout:
            reported = int(line)
            if reported >= 200:
                break
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
    assert writer.returncode == -signal.SIGKILL and reported >= 200
    with SQLiteStore(db) as store:
        events = store.load("s_crash")
    assert len(events) >= reported
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    messages = derive_messages(events)
    assert messages and messages[0].role == "assistant"
