"""Grouped commits keep the log's durability: the agent loop writes a step's events together,
yet every event is on disk before the model is asked and before a tool's effect starts, and a
harness killed with SIGKILL mid-step leaves a loadable session missing at most that step's tail."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

from protoagent.agents.presets import get_preset
from protoagent.api import HOME_ENV
from protoagent.events import SessionLog, SQLiteStore
from protoagent.events.types import Event
from protoagent.models.types import ModelEvent, ModelRequest
from protoagent.testing import ScriptedModel, final_turn, make_repo, tool_turn
from protoagent.testing.agent_turn import run_preset_turn


def stored_seq(db: Path) -> int:
    """The last seq another connection sees in ``db`` (what a crash right now would keep)."""
    with sqlite3.connect(db) as reader:
        row = reader.execute("SELECT max(seq) FROM events").fetchone()
    return int(row[0] or 0)


class DiskCheckingModel:
    """Stands where the model stands: before answering, notes how much of the log is on disk."""

    name = "scripted"

    def __init__(self, script: ScriptedModel, db: Path, seen: list[Event]) -> None:
        self.model = script.model
        self.script = script
        self.db = db
        self.seen = seen
        self.on_disk_when_asked: list[tuple[int, int]] = []
        """Per request: (events appended so far, events on disk)."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        self.on_disk_when_asked.append((len(self.seen), stored_seq(self.db)))
        return self.script.stream(request)


def run_steps(tmp_path: Path, turns: list[dict[str, object]]) -> tuple[list[Event], list[int], DiskCheckingModel]:
    """Run ``turns`` through the real loop; per event, the seq on disk when it was appended."""
    repo = make_repo(tmp_path / "repo", {"README.md": "x\n"}, git=False)
    os.environ[HOME_ENV] = str(tmp_path / "home")
    db = tmp_path / "steps.sqlite"
    seen: list[Event] = []
    on_disk: list[int] = []

    def on_event(event: Event) -> None:
        seen.append(event)
        on_disk.append(stored_seq(db) if db.exists() else 0)

    model = DiskCheckingModel(ScriptedModel.from_lines(turns), db, seen)
    with SQLiteStore(db) as store:
        session_id, outcome = asyncio.run(
            run_preset_turn(
                "go",
                repo=repo,
                model="scripted:steps",
                store=store,
                approval="auto",
                preset=replace(get_preset("coding"), max_steps=len(turns) + 1),
                provider=model,
                on_event=on_event,
                sandbox="off",
                artifacts_root=tmp_path / "home" / "artifacts",
            )
        )
        assert outcome.status == "completed", outcome
        assert [e.seq for e in store.load(session_id)] == [e.seq for e in seen]
    return seen, on_disk, model


def test_every_event_is_on_disk_before_the_model_is_asked(tmp_path: Path) -> None:
    turns = [tool_turn("shell", say="checking", command=f"echo {i}") for i in range(3)] + [final_turn("done")]
    _, _, model = run_steps(tmp_path, turns)
    assert len(model.on_disk_when_asked) == 4
    assert all(appended == on_disk for appended, on_disk in model.on_disk_when_asked), model.on_disk_when_asked


def test_every_event_is_on_disk_before_a_tool_effect_starts(tmp_path: Path) -> None:
    db = tmp_path / "steps.sqlite"
    probe = f"import sqlite3; print(sqlite3.connect({str(db)!r}).execute('SELECT max(seq) FROM events').fetchone()[0])"
    turns = [tool_turn("execute_command", argv=[sys.executable, "-c", probe]) for _ in range(2)]
    events, _, _ = run_steps(tmp_path, [*turns, final_turn("done")])
    decided = [e.seq for e in events if e.type == "approval.decided"]
    seen_by_effect = [int(e.payload["output"].splitlines()[1]) for e in events if e.type == "tool.ended"]
    assert seen_by_effect == decided


def test_a_step_is_written_in_two_transactions_not_one_per_event(tmp_path: Path) -> None:
    """Events wait for the model request or the tool effect that follows them."""
    events, on_disk, _ = run_steps(tmp_path, [tool_turn("shell", command="echo hi"), final_turn("done")])
    by_type = {e.type: (e.seq, written) for e, written in zip(events, on_disk, strict=True) if e.step == 1}
    [(next_request, before_next_request)] = [
        (e.seq, written)
        for e, written in zip(events, on_disk, strict=True)
        if e.type == "model.requested" and e.step == 2
    ]
    requested, _ = by_type["model.requested"]
    _, before_completed = by_type["model.completed"]
    _, before_decided = by_type["approval.decided"]
    decided, _ = by_type["approval.decided"]
    _, before_ended = by_type["tool.ended"]
    assert before_completed == requested  # model.requested (and all before it) went out with the request
    assert before_decided == requested  # completed, started, approval requested: held ...
    assert before_ended == decided  # ... and written together before the command ran
    assert before_next_request == decided  # the result goes out with the next request
    assert next_request == by_type["tool.ended"][0] + 1
    assert stored_seq(tmp_path / "steps.sqlite") == len(events)


def test_held_appends_are_written_on_flush_and_at_the_end_of_the_block(tmp_path: Path) -> None:
    db = tmp_path / "held.sqlite"
    with SQLiteStore(db) as store:
        log = SessionLog(store, "s_held")
        log.append("session.created", {"preset": "p", "model": "m", "root": "/r", "approval_policy": "auto"})
        with log.held():
            log.append("user.message", {"text": "a"})
            log.append("user.message", {"text": "b"})
            assert stored_seq(db) == 1
            log.flush()
            assert stored_seq(db) == 3
            log.append("user.message", {"text": "c"})
            with log.unheld():
                assert stored_seq(db) == 4
                log.append("user.message", {"text": "d"})
                assert stored_seq(db) == 5
            log.append("user.message", {"text": "e"})
            assert stored_seq(db) == 5
        assert stored_seq(db) == 6
        assert [e.payload.get("text") for e in store.load("s_held")][1:] == ["a", "b", "c", "d", "e"]


def test_held_appends_of_one_task_do_not_hold_another_tasks_appends(tmp_path: Path) -> None:
    db = tmp_path / "tasks.sqlite"
    with SQLiteStore(db) as store:
        log = SessionLog(store, "s_tasks")
        log.append("session.created", {"preset": "p", "model": "m", "root": "/r", "approval_policy": "auto"})

        async def main() -> tuple[int, int]:
            go = asyncio.Event()

            async def other_agent() -> int:
                await go.wait()
                log.append("user.message", {"text": "not held"})
                return stored_seq(db)

            task = asyncio.create_task(other_agent())
            with log.held():
                log.append("user.message", {"text": "held"})
                log.flush()
                go.set()
                seen_by_other = await task
                log.append("user.message", {"text": "held again"})
                return seen_by_other, stored_seq(db)

        assert asyncio.run(main()) == (3, 3)
        assert stored_seq(db) == 4


KILLED_RUN = textwrap.dedent(
    """
    import asyncio, sys
    from dataclasses import replace
    from pathlib import Path
    from protoagent.agents.presets import get_preset
    from protoagent.testing.agent_turn import run_preset_turn
    from protoagent.events import SQLiteStore
    from protoagent.testing import ScriptedModel, final_turn, tool_turn

    db, repo, marker = sys.argv[1:4]
    turns = [tool_turn("shell", command=f"echo step {i}") for i in range(3)]
    turns.append(tool_turn("shell", command=f"echo $$ > {marker}.pid; touch {marker}; exec sleep 60"))
    store = SQLiteStore(db)
    asyncio.run(run_preset_turn("go", repo=Path(repo), model="scripted:kill", store=store, approval="auto",
                          preset=replace(get_preset("coding"), max_steps=10),
                          provider=ScriptedModel.from_lines([*turns, final_turn("done")]), sandbox="off"))
    """
)


def test_a_harness_killed_mid_step_leaves_a_loadable_session_with_every_event_before_the_effect(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "x\n"}, git=False)
    db, marker = tmp_path / "killed.sqlite", tmp_path / "effect-started"
    env = {**os.environ, HOME_ENV: str(tmp_path / "home")}
    harness = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(db), str(repo), str(marker)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert harness.poll() is None, "the harness ended before the fourth command started"
            assert time.monotonic() < deadline, "the fourth command never started"
            time.sleep(0.02)
    finally:
        harness.send_signal(signal.SIGKILL)
        harness.wait(30)
        pid_file = Path(f"{marker}.pid")
        if pid_file.exists():
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
    with SQLiteStore(db) as store:
        [summary] = store.list()
        events = store.load(summary.session_id)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    ended = [e.payload["output"] for e in events if e.type == "tool.ended"]
    assert ended == [f"exit code: 0\nstep {i}\n" for i in range(3)]
    assert events[-1].type == "approval.decided" and events[-1].step == 4  # the effect's step, up to the effect
