"""What confining a command costs: spawn-to-exit time of ``/bin/true`` per sandbox backend.

Method: each backend wraps the same prepared argv (``processes.sandbox``) for a scratch
workspace; the wrapped argv is run to completion with ``subprocess.run`` N times after two
warm-up runs. Printed per backend: the median and 95th percentile in milliseconds and the
overhead over running unconfined. Backends that are not available here are reported as such.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from protoagent.processes.landlock_exec import MIN_ABI, abi_version
from protoagent.processes.sandbox import BwrapSandbox, LandlockSandbox, SandboxScope, Unconfined, bwrap_executable

RUNS = 50


def timings(argv: tuple[str, ...], cwd: Path) -> list[float]:
    for _ in range(2):
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
    samples = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        for name in ("root", "home", "tmp"):
            (base / name).mkdir()
        scope = SandboxScope(base / "root", base / "home", base / "tmp", base / "root")
        profiles: dict[str, object] = {"none": Unconfined(False, "bench")}
        bwrap = bwrap_executable()
        profiles["bwrap"] = BwrapSandbox(bwrap) if bwrap else None
        profiles["landlock"] = LandlockSandbox() if abi_version() >= MIN_ABI else None
        baseline = 0.0
        for name, profile in profiles.items():
            if profile is None:
                print(f"{name:>9}: not available here")
                continue
            assert isinstance(profile, BwrapSandbox | LandlockSandbox | Unconfined)
            samples = sorted(timings(profile.wrap(("/bin/true",), scope), scope.root))
            median, p95 = statistics.median(samples), samples[int(len(samples) * 0.95) - 1]
            baseline = baseline or median
            overhead = median - baseline
            print(f"{name:>9}: median {median:6.2f} ms, p95 {p95:6.2f} ms, overhead {overhead:+6.2f} ms ({RUNS} runs)")


if __name__ == "__main__":
    main()
