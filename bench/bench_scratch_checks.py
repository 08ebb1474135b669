"""Seconds per candidate of guided repair's scratch checks on real libraries, before and after.

Method
------
For each chosen bug of ``evals/real_bugs/bugs.json`` (default: one per library), its library is
copied with the bug planted and its test added, exactly as ``bench_guided_repair.py --real``
does, and the check the run would capture (``python -m pytest -q -p no:cacheprovider`` with this
interpreter, its installed plugins included) is run once at baseline for its failing output.
One ``ScratchWorkspace`` per arm (one copy per repair, the run's sandbox, a fresh
``ProcessRegistry``) then runs ``--rounds`` failing candidates (the planted text written again,
so the file changes on disk each time) and one passing candidate (the released text):

- ``whole, spawned`` (before): every candidate runs the whole check as its own command;
- ``narrowed, spawned``: the baseline's failing tests first, as their own command;
- ``narrowed, forked`` (after, the default): the same, in children of the check's fork server.

Per arm: the first failing candidate (it pays the fork server's start), the median of the other
failing candidates, and the passing candidate (narrowed run, then the whole check). Every
candidate's verdict must match the arm "before": a mismatch is printed as WRONG. Wall-clock
seconds (``time.perf_counter``) around ``ScratchWorkspace.run``; the load average is printed.

Run: ``python bench/bench_scratch_checks.py [--bugs NAME,...] [--rounds 8]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench_guided_repair import plant, real_bugs
from protoagent.checks.types import CheckSpec
from protoagent.processes.runner import ProcessRegistry
from protoagent.processes.sandbox import select_sandbox
from protoagent.repair.scratch import ScratchOptions, ScratchWorkspace

CHECK = CheckSpec("pytest", (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"))
ARMS = (("whole, spawned", False, False), ("narrowed, spawned", True, False), ("narrowed, forked", True, True))
DEFAULT_BUGS = ("ordinalize_teens", "canonical_epoch", "sliding_window_first")


@dataclass(frozen=True, slots=True)
class ArmFigures:
    first_s: float
    failing_s: float
    passing_s: float
    verdicts: tuple[bool, ...]


async def candidates(work: Path, bug: dict[str, object], options: ScratchOptions, rounds: int) -> ArmFigures:
    edit = bug["plant"][0]  # type: ignore[index]
    planted = (work / edit["path"]).read_text(encoding="utf-8")
    released = planted.replace(edit["new"], edit["old"])
    times: list[float] = []
    verdicts: list[bool] = []
    sandbox = select_sandbox("auto")
    with ScratchWorkspace(work, sys.executable, sandbox, processes=ProcessRegistry(), options=options) as scratch:
        for text in [planted] * rounds + [released]:
            scratch.write(edit["path"], text)
            started = time.perf_counter()
            run = await scratch.run(CHECK, 60)
            times.append(time.perf_counter() - started)
            verdicts.append(run.passed)
    return ArmFigures(times[0], statistics.median(times[1:-1]), times[-1], tuple(verdicts))


def bench(bug: dict[str, object], rounds: int) -> None:
    print(f"{bug['name']} ({bug['library']}):", flush=True)
    before: tuple[bool, ...] | None = None
    for label, narrow, fork in ARMS:
        with tempfile.TemporaryDirectory(prefix="bench-scratch-") as folder:
            work = Path(folder) / str(bug["name"])
            plant(bug, work)
            baseline = subprocess.run(CHECK.argv, cwd=work, capture_output=True, text=True, check=False).stdout
            options = ScratchOptions(failing={"pytest": baseline} if narrow else {}, fork=fork)
            figures = asyncio.run(candidates(work, bug, options, rounds))
        before = before or figures.verdicts
        wrong = "" if figures.verdicts == before else "  WRONG: verdicts differ from the whole spawned check"
        print(
            f"  {label:<18} first {figures.first_s:5.2f} s  failing (median) {figures.failing_s:5.2f} s  "
            f"passing {figures.passing_s:5.2f} s{wrong}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bugs", default=",".join(DEFAULT_BUGS), help="comma-separated bug names")
    parser.add_argument("--rounds", type=int, default=8, help="failing candidates per arm")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}  load average: {os.getloadavg()[0]:.2f}  sandbox: {select_sandbox('auto').name}\n")
    for bug in real_bugs([n for n in args.bugs.split(",") if n]):
        bench(bug, max(2, args.rounds))
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
