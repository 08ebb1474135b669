"""Shell observation latency: how long the harness takes to run a trivial command and to poll.

Method. A temporary workspace, a ``ProcessRegistry`` and a ``ToolContext`` are built the way a
session wires them; every figure is wall time (``time.perf_counter``) inside one event loop,
as in a running session, so ``asyncio.run`` start-up is not counted.

* shell round trip: ``ShellTool.prepare`` + ``execute`` of ``echo hi`` (spawn ``/bin/sh``,
  wait for exit and the group to be clear, read the journal, format); 3 warm-up runs, then
  ``RUNS`` measured runs.
* execute_command round trip: the same for argv ``["echo", "hi"]`` (no shell in between).
* poll latency: ``ProcessTool.prepare`` + ``execute`` of ``poll`` on a running ``sleep 60``
  started by shell with ``yield_time_ms=0``; ``RUNS`` polls, then the process is terminated.

Prints median, 90th percentile and minimum in milliseconds. Run: ``python bench/bench_shell.py``.
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from protoagent.processes import ExecuteCommandTool, ProcessRegistry, ProcessTool, ShellTool
from protoagent.tools.base import Tool, ToolContext, ToolOutput
from protoagent.tools.services import RunServices

RUNS = 30
WARMUP = 3


async def call(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> ToolOutput:
    prepared = tool.prepare(tool.input_model(**arguments), ctx)
    return await tool.execute(prepared, ctx)


async def timed(action: Callable[[], Awaitable[ToolOutput]], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        output = await action()
        samples.append((time.perf_counter() - started) * 1000)
        assert output.status == "ok", output.text
    return samples


def report(name: str, samples: list[float]) -> None:
    ordered = sorted(samples)
    p90 = ordered[max(0, round(0.9 * len(ordered)) - 1)]
    print(
        f"{name:<34} median {statistics.median(ordered):7.2f} ms   p90 {p90:7.2f} ms   "
        f"min {ordered[0]:7.2f} ms   (n={len(ordered)})"
    )


async def measure(ctx: ToolContext) -> None:
    shell, execute, process = ShellTool(), ExecuteCommandTool(), ProcessTool()
    await timed(lambda: call(shell, ctx, command="echo hi"), WARMUP)
    report("shell('echo hi') round trip", await timed(lambda: call(shell, ctx, command="echo hi"), RUNS))
    report("execute_command(echo hi)", await timed(lambda: call(execute, ctx, argv=["echo", "hi"]), RUNS))
    started = await call(shell, ctx, command="sleep 60", yield_time_ms=0)
    process_id = started.data["process_id"]
    poll = await timed(lambda: call(process, ctx, action="poll", process_id=process_id), RUNS)
    report("process poll (running process)", poll)
    await call(process, ctx, action="terminate", process_id=process_id)


def main() -> None:
    registry = ProcessRegistry()
    with tempfile.TemporaryDirectory(prefix="bench-shell-") as folder:
        base = Path(folder).resolve()
        (base / "repo").mkdir()
        ctx = ToolContext(
            "bench", "bench", base / "repo", artifacts_dir=base / "artifacts", services=RunServices(processes=registry)
        )
        try:
            asyncio.run(measure(ctx))
        finally:
            registry.shutdown()


if __name__ == "__main__":
    main()
