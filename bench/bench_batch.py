"""Batch runner throughput and store append latency.

Prints:
- tasks per minute of the local pool with 1, 2 and 4 workers on scripted tasks (the evals suite,
  repeated), counting the rows that actually landed in results;
- Ray's overhead per task over the local pool (same tasks, same workers), with and without the
  start-up of the local Ray instance;
- append latency per event, PostgreSQL vs SQLite (when PostgreSQL binaries are installed).

Run: python bench/bench_batch.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from protoagent.batch.engines import LocalEngine, RayEngine
from protoagent.batch.execute import WorkerSetup
from protoagent.batch.tasks import BatchTask, load_tasks
from protoagent.events.sqlite_store import SQLiteStore
from protoagent.events.types import Event

SUITE = Path(__file__).resolve().parents[1] / "evals" / "smoke.jsonl"


def suite(repeat: int) -> list[BatchTask]:
    base = load_tasks(SUITE)
    return [t.model_copy(update={"id": f"{t.id}-{i}"}) for i in range(repeat) for t in base]


def timed_run(engine: Any, tasks: list[BatchTask], home: Path) -> tuple[float, int]:
    rows: list[dict[str, Any]] = []
    setup = WorkerSetup(store=str(home / "sessions.sqlite"), data_home=str(home))
    start = time.perf_counter()
    engine.run(tasks, setup, rows.append)
    wall = time.perf_counter() - start
    assert len(rows) == len(tasks) and all(r.get("status") != "error" for r in rows), rows
    return wall, len(rows)


def throughput(repeat: int) -> dict[int, float]:
    tasks = suite(repeat)
    out = {}
    for workers in (1, 2, 4):
        with tempfile.TemporaryDirectory() as home:
            wall, count = timed_run(LocalEngine(workers), tasks, Path(home))
        out[workers] = count / wall * 60
        print(f"local pool, {workers} worker(s): {count} tasks in {wall:.2f} s = {out[workers]:.0f} tasks/min")
    return out


def ray_overhead(repeat: int, workers: int = 2) -> None:
    tasks = suite(repeat)
    with tempfile.TemporaryDirectory() as home:
        local_wall, count = timed_run(LocalEngine(workers), tasks, Path(home))
    with tempfile.TemporaryDirectory() as home:
        start = time.perf_counter()
        RayEngine(workers).run([], WorkerSetup(store=str(Path(home) / "s.sqlite"), data_home=home), lambda _: None)
        startup = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as home:
        ray_wall, _ = timed_run(RayEngine(workers), tasks, Path(home))
    per_task = (ray_wall - local_wall) / count * 1000
    per_task_warm = (ray_wall - startup - local_wall) / count * 1000
    print(
        f"ray vs local pool ({workers} workers, {count} tasks): {ray_wall:.2f} s vs {local_wall:.2f} s; "
        f"overhead {per_task:+.0f} ms/task including Ray start-up ({startup:.1f} s), "
        f"{per_task_warm:+.0f} ms/task without"
    )


def _events(session_id: str, n: int) -> list[Event]:
    created = {"preset": "p", "model": "m", "root": "/r", "approval_policy": "deny", "title": "bench"}
    head = Event(seq=1, session_id=session_id, time=time.time(), type="session.created", payload=created)
    body = [
        Event(seq=i, session_id=session_id, time=time.time(), type="user.message", payload={"text": "x" * 200})
        for i in range(2, n + 1)
    ]
    return [head, *body]


def append_latency(store: Any, n: int = 2000) -> tuple[float, float]:
    samples = []
    for event in _events(f"bench-{time.time_ns()}", n):
        start = time.perf_counter()
        store.append(event)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def store_latency() -> None:
    with tempfile.TemporaryDirectory() as tmp, SQLiteStore(Path(tmp) / "s.sqlite") as lite:
        median, p95 = append_latency(lite)
    print(f"SQLite append: median {median:.3f} ms, p95 {p95:.3f} ms per event")
    from protoagent.testing.postgres import missing_reason, temporary_postgres

    if missing_reason() is not None:
        print(f"PostgreSQL append: skipped ({missing_reason()})")
        return
    from protoagent.events.postgres_store import PostgresStore

    with temporary_postgres() as url, PostgresStore(url) as pg:
        pg_median, pg_p95 = append_latency(pg)
    print(
        f"PostgreSQL append (loopback, fsync off): median {pg_median:.3f} ms, p95 {pg_p95:.3f} ms per event; "
        f"ratio to SQLite {pg_median / median:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3, help="copies of the evals suite per measurement")
    args = parser.parse_args()
    figures = throughput(args.repeat)
    print(json.dumps({"tasks_per_min": {str(k): round(v, 1) for k, v in figures.items()}}))
    ray_overhead(args.repeat)
    store_latency()


if __name__ == "__main__":
    main()
