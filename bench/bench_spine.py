"""Runtime-spine figures: harness overhead per step, session load + derive, CLI start-up.

Method
------
1. Overhead per step: a 200-step session on the scripted model (199 turns that call the real
   ``read_file`` tool on a small file, then a final answer) with the SQLite store, approval
   policy ``auto`` and a model-call budget of 200, so every step calls the model (asserted).
   Each step's wall time minus the time spent inside the provider's ``stream`` (measured by a
   timing wrapper around the scripted model) is the harness overhead: request building from
   the incrementally derived messages, event appends, the tool pipeline and the tool itself.
   ``bench_steps.py`` measures the shell-command step against mini-swe-agent.
   We print the median and p90 over the 200 steps.
2. Load + derive: sessions of 50 turns (about 600 events) and of 10,000 events are written to
   SQLite; a fresh store (new connection) then loads and validates the log and derives the
   model messages. Median of 7 runs.
3. ``protoagent --help`` wall time: median of 10 subprocess runs, with the bare interpreter
   start-up (``python -c pass``) measured in the same process as the baseline.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

from protoagent.agents.loop import AgentLoop, Budget
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec
from protoagent.events import SessionLog, SQLiteStore, derive_messages
from protoagent.models.types import ModelEvent, ModelRequest
from protoagent.testing import ScriptedModel, final_turn, make_repo, tool_turn


class TimedModel:
    """Wraps the scripted model and accumulates the time spent inside it."""

    def __init__(self, inner: ScriptedModel) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.spent: list[float] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        started = time.perf_counter()
        async for item in self.inner.stream(request):
            yield item
        self.spent.append(time.perf_counter() - started)


def step_overhead(tmp: Path) -> tuple[float, float]:
    repo = make_repo(tmp / "repo", {"a.py": "x = 1\n" * 20}, git=False)
    turns = [tool_turn("read_file", path="a.py") for _ in range(199)] + [final_turn("done")]
    model = TimedModel(ScriptedModel.from_lines(turns))
    with SQLiteStore(tmp / "bench.sqlite") as store:
        preset = Preset("bench", "bench", ("read_file",), max_steps=200)
        spec = SessionSpec(
            repo=repo,
            model="scripted:bench",
            store=store,
            preset=preset,
            approval="auto",
            provider=model,
            artifacts_root=tmp / "artifacts",
        )
        session = AgentSession.create(spec)
        loop = AgentLoop(session, budget=Budget(200))
        log = session.log
        log.append("turn.started", {}, turn=1)
        log.append("user.message", {"text": "read a.py 199 times"}, turn=1)
        loop.turn = 1
        overheads = []
        for step in range(1, 201):
            before = len(model.spent)
            started = time.perf_counter()
            asyncio.run(loop.step(step))
            wall = time.perf_counter() - started
            overheads.append(wall - sum(model.spent[before:]))
    # With the default budget of 80 model calls, later steps would fail cheaply at the budget check.
    assert len(model.spent) == 200, f"only {len(model.spent)} of 200 steps called the model"
    overheads.sort()
    return statistics.median(overheads) * 1000, overheads[int(len(overheads) * 0.9)] * 1000


def write_session(store: SQLiteStore, sid: str, turns: int, tool_calls_per_turn: int) -> int:
    log = SessionLog(store, sid)
    log.append("session.created", {"preset": "coding", "model": "scripted:x", "root": "/r", "approval_policy": "auto"})
    for turn in range(1, turns + 1):
        log.append("turn.started", {}, turn=turn)
        log.append("user.message", {"text": f"request {turn}"}, turn=turn)
        for step in range(1, tool_calls_per_turn + 1):
            log.append("model.requested", {"provider": "scripted", "model": "x"}, turn=turn, step=step)
            log.append("model.delta", {"text": "looking"}, turn=turn, step=step)
            call = {"id": f"c{turn}_{step}", "name": "read_file", "arguments": {"path": "a.py"}}
            log.append("model.completed", {"text": "looking", "tool_calls": [call]}, turn=turn, step=step)
            log.append(
                "tool.started",
                {"call_id": call["id"], "tool": "read_file", "arguments": call["arguments"]},
                turn=turn,
                step=step,
            )
            log.append(
                "tool.ended",
                {"call_id": call["id"], "tool": "read_file", "status": "ok", "output": "1| x = 1\n" * 40},
                turn=turn,
                step=step,
            )
        log.append("model.completed", {"text": "done"}, turn=turn)
        log.append("turn.ended", {"status": "completed"}, turn=turn)
    return len(log)


def load_and_derive(db: Path, sid: str) -> float:
    times = []
    for _ in range(7):
        with SQLiteStore(db) as store:
            started = time.perf_counter()
            events = store.load(sid)
            derive_messages(events)
            times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def cli_startup() -> tuple[float, float]:
    def median_of(argv: list[str]) -> float:
        runs = []
        for _ in range(10):
            started = time.perf_counter()
            subprocess.run(argv, check=True, capture_output=True)
            runs.append(time.perf_counter() - started)
        return statistics.median(runs) * 1000

    exe = Path(sys.executable).with_name("protoagent")
    return median_of([str(exe), "--help"]), median_of([sys.executable, "-c", "pass"])


def main() -> None:
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        median, p90 = step_overhead(tmp)
        print(
            f"harness overhead per step (200-step scripted session, SQLite): median {median:.2f} ms, "
            f"p90 {p90:.2f} ms (target < 2 ms)"
        )
        db = tmp / "load.sqlite"
        with SQLiteStore(db) as store:
            small = write_session(store, "s_50turns", 50, 2)
            large = write_session(store, "s_10k", 555, 3)
        print(
            f"load + derive, 50-turn session ({small} events): {load_and_derive(db, 's_50turns'):.1f} ms "
            "(target < 50 ms)"
        )
        print(f"load + derive, {large}-event session: {load_and_derive(db, 's_10k'):.1f} ms")
    help_ms, bare_ms = cli_startup()
    print(
        f"protoagent --help: {help_ms:.0f} ms wall (bare python start-up {bare_ms:.0f} ms; "
        f"ratio {help_ms / bare_ms:.2f}; target < 150 ms)"
    )


if __name__ == "__main__":
    main()
