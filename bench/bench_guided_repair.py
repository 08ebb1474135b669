"""Guided repair on the embedded model: one-line bugs fixed and verified, and the bundled demo.

Method
------
1. One-line bugs: each repository under ``evals/one_line_bugs/`` (a swapped pair of arguments,
   an off-by-one, a wrong operator, an inverted condition, a wrong constant, a missing
   ``.strip()``, a wrong index, a wrong variable returned, a misspelt dict key, a wrong
   comparison; each with a failing pytest test) is copied to a fresh temporary folder and run
   through ``protoagent run "fix the failing test" --model local --approval auto --json`` as a
   subprocess, once with guided repair on and once with ``PROTOAGENT_GUIDED_REPAIR=off``. A run
   gets ``--limit`` seconds (default 180); past that its process group is stopped and the bug
   counts as not fixed. Fixed and verified = the run's report says ``verified`` and
   ``criteria_supported`` AND the bench's own ``python -m pytest`` in the copy passes afterwards.
2. Demo: ``examples/date-parser`` copied the same way and run with the demo's objective ("fix
   the failing date parser test") under ``PROTOAGENT_LOCAL_SEED`` = 1..``--seeds`` (the seed of
   the repair's sampled candidates), guided repair on. Fixed and verified as above (the
   example's own ``unittest`` command is the bench's check); wall time per run.

Every run has its own ``PROTOAGENT_HOME`` (session store) in the temporary folder. Seconds are
wall-clock per run, model load included. Targets (issue 15): at least 5 of 10 bugs fixed and
verified within 3 minutes each (guided repair off: the figure to compare against); the demo
ends within 3 minutes and is fixed and verified in at least 4 of 5 seeds.

Run: ``python bench/bench_guided_repair.py [--bugs NAME,...] [--seeds 5] [--limit 180] [--no-off] [--no-demo]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUGS = ROOT / "evals" / "one_line_bugs"
DEMO = ROOT / "examples" / "date-parser"
DEMO_OBJECTIVE = "fix the failing date parser test"
BUG_OBJECTIVE = "fix the failing test"


@dataclass(frozen=True, slots=True)
class Outcome:
    name: str
    fixed: bool
    reported: bool
    seconds: float
    status: str
    note: str


def run_once(name: str, source: Path, objective: str, env: dict[str, str], limit: float, check: list[str]) -> Outcome:
    with tempfile.TemporaryDirectory(prefix="bench-repair-") as folder:
        work = Path(folder) / source.name
        shutil.copytree(source, work, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        argv = [sys.executable, "-m", "protoagent", "run", objective, "--repo", str(work)]
        argv += ["--model", "local", "--approval", "auto", "--json"]
        child_env = {**os.environ, **env, "PROTOAGENT_HOME": str(Path(folder) / "home")}
        started = time.perf_counter()
        process = subprocess.Popen(
            argv, env=child_env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            stdout, _ = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            return Outcome(name, False, False, time.perf_counter() - started, "timeout", f"stopped after {limit:g} s")
        seconds = time.perf_counter() - started
        report = _report(stdout)
        reported = bool(report.get("verified")) and bool(report.get("criteria_supported"))
        passes = subprocess.run(check, cwd=work, capture_output=True, check=False).returncode == 0
        notes = [n for n in report.get("notes", []) if str(n).startswith("guided repair")]
        return Outcome(name, reported and passes, reported, seconds, str(report.get("status", "?")), "; ".join(notes))


def _report(stdout: bytes) -> dict[str, object]:
    for line in reversed(stdout.decode("utf-8", "replace").splitlines()):
        if line.startswith("{"):
            try:
                data = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(data, dict):
                return data
    return {}


def show(outcome: Outcome) -> None:
    mark = "fixed+verified" if outcome.fixed else "not fixed"
    print(f"  {outcome.name:<22} {mark:<15} {outcome.seconds:6.1f} s  {outcome.status:<10} {outcome.note}", flush=True)


def bench_bugs(names: list[str], modes: list[str], limit: float) -> None:
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    for mode in modes:
        print(f"one-line bugs, guided repair {mode}:", flush=True)
        outcomes = []
        for name in names:
            outcome = run_once(name, BUGS / name, BUG_OBJECTIVE, {"PROTOAGENT_GUIDED_REPAIR": mode}, limit, pytest)
            show(outcome)
            outcomes.append(outcome)
        fixed = sum(o.fixed for o in outcomes)
        mean = sum(o.seconds for o in outcomes) / max(1, len(outcomes))
        print(f"  => guided repair {mode}: {fixed}/{len(outcomes)} fixed and verified; mean {mean:.1f} s per bug\n")


def bench_demo(seeds: int, limit: float) -> None:
    check = [sys.executable, "-m", "unittest", "discover", "-s", ".", "-p", "test*.py", "-q"]
    print("demo (examples/date-parser), guided repair on:", flush=True)
    outcomes = []
    for seed in range(1, seeds + 1):
        env = {"PROTOAGENT_GUIDED_REPAIR": "on", "PROTOAGENT_LOCAL_SEED": str(seed)}
        outcome = run_once(f"seed {seed}", DEMO, DEMO_OBJECTIVE, env, limit, check)
        show(outcome)
        outcomes.append(outcome)
    fixed = sum(o.fixed for o in outcomes)
    longest = max((o.seconds for o in outcomes), default=0.0)
    print(f"  => demo: {fixed}/{len(outcomes)} seeds fixed and verified; longest run {longest:.1f} s\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bugs", default="", help="comma-separated bug folders (default: all)")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--limit", type=float, default=180.0, help="seconds per run before it is stopped")
    parser.add_argument("--no-off", action="store_true", help="skip the guided-repair-off arm")
    parser.add_argument("--no-bugs", action="store_true")
    parser.add_argument("--no-demo", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.bugs.split(",") if n] or sorted(p.name for p in BUGS.iterdir() if p.is_dir())
    print(f"cores: {os.cpu_count()}  load average: {os.getloadavg()[0]:.2f}\n", flush=True)
    if not args.no_bugs:
        bench_bugs(names, ["on"] if args.no_off else ["on", "off"], args.limit)
    if not args.no_demo:
        bench_demo(args.seeds, args.limit)


if __name__ == "__main__":
    main()
