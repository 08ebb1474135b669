"""Ctrl-C to exit: how long a run on the embedded model takes to stop after SIGINT.

Runs ``protoagent run`` on a copy of the bundled example with the embedded model, sends SIGINT
at a random moment (between 2 and 20 s in, so it lands in model loading, prompt evaluation,
generation or a check), and measures the time until the process has exited. Prints each
interrupt, the median and the 95th percentile (target: p95 under 1 s), and the exit codes.

Run: python bench/bench_interrupt.py [--count 20] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "date-parser"
TARGET_P95_S = 1.0


def one_interrupt(delay_s: float) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "date-parser"
        shutil.copytree(EXAMPLE, work)
        env = {**os.environ, "PROTOAGENT_HOME": str(Path(tmp) / "home")}
        env.pop("PROTOAGENT_STORE", None)
        command = [sys.executable, "-m", "protoagent", "run", "fix the failing date parser test"]
        process = subprocess.Popen(
            [*command, "--repo", str(work), "--approval", "auto", "--json"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(delay_s)
        if process.poll() is not None:
            return -1.0, process.returncode
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        return time.monotonic() - sent, process.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    latencies: list[float] = []
    codes: list[int] = []
    for index in range(args.count):
        delay = rng.uniform(2.0, 20.0)
        latency, code = one_interrupt(delay)
        if latency < 0:
            print(f"interrupt {index + 1}: the run had already ended after {delay:.1f} s (exit {code}); not counted")
            continue
        latencies.append(latency)
        codes.append(code)
        print(f"interrupt {index + 1}: SIGINT at {delay:.1f} s, exited after {latency:.3f} s with {code}")
    if not latencies:
        print("no interrupt landed in a running run")
        return 1
    ordered = sorted(latencies)
    p95 = ordered[round(0.95 * (len(ordered) - 1))]
    print(
        f"interrupts measured: {len(latencies)}; median {statistics.median(latencies):.3f} s; p95 {p95:.3f} s "
        f"(target < {TARGET_P95_S:.0f} s); exit codes {sorted(set(codes))}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
