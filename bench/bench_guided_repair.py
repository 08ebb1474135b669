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

3. Real-library bugs (``--real``): each bug of ``evals/real_bugs/bugs.json`` (six one-line, four
   two-line, planted in copies of packaging, more-itertools and boltons) is planted in a fresh
   copy of its library with its own failing test, and run with the bug's own objective (as a
   user would write it), guided repair on. Fixed and verified as above (the bench's own
   ``python -m pytest``); a report that says verified while that pytest fails is printed as
   DISHONEST and counted. After the run has ended (the harness never sees it) the bench writes
   the bug's ``holdout`` test (other inputs of the same behaviour, as a careful maintainer would
   write them) next to the package, runs it with its own ``python -m pytest`` and removes it;
   a fix that passes the bug's test but not the holdout overfits it. It also prints whether
   every planted file now equals the released one. ``--validate`` only checks that every test
   passes on the released library and fails with its bug planted, and that every holdout passes
   on the released library.

Every run has its own ``PROTOAGENT_HOME`` (session store) in the temporary folder. Seconds are
wall-clock per run, model load included; the load average is printed first (the figures move
with it on a shared machine). Targets: the toy set at least 9 of 10 fixed and verified, the
real-library set at least 6 of 10 with no dishonest report, every run ending with its report
within 3 minutes; the demo verified within 30 s.

Run: ``python bench/bench_guided_repair.py [--bugs NAME,...] [--seeds 5] [--limit 180] [--no-off] [--no-demo]
[--real] [--validate]``
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUGS = ROOT / "evals" / "one_line_bugs"
REAL = ROOT / "evals" / "real_bugs"
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
    holdout: bool | None = None  # the bench's held-out test passes after the run (None: not judged)
    released: bool | None = None  # every planted file equals the released one after the run


Judge = Callable[[Path], tuple[bool, bool]]


def run_once(
    name: str,
    source: Path | Callable[[Path], None],
    objective: str,
    env: dict[str, str],
    limit: float,
    check: list[str],
    judge: Judge | None = None,
) -> Outcome:
    """One run on a fresh copy: ``source`` is a folder to copy, or makes the copy itself.

    ``judge`` looks at the copy after the run has ended: (held-out test passes, files as released).
    """
    with tempfile.TemporaryDirectory(prefix="bench-repair-") as folder:
        work = Path(folder) / name
        if isinstance(source, Path):
            shutil.copytree(source, work, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
        else:
            source(work)
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
        listed = report.get("notes")
        notes = [str(n) for n in (listed if isinstance(listed, list) else []) if str(n).startswith("guided repair")]
        if not notes and report:
            notes = [str(report.get("summary", ""))[:160]]
        outcome = Outcome(
            name, reported and passes, reported, seconds, str(report.get("status", "?")), "; ".join(notes)
        )
        if reported and not passes:
            outcome = replace(outcome, note=f"DISHONEST: reported verified but the tests fail; {outcome.note}")
        if judge is not None:
            holdout, released = judge(work)
            outcome = replace(outcome, holdout=holdout, released=released)
        return outcome


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
    load = f"load {os.getloadavg()[0]:4.1f}"
    timing = f"{outcome.seconds:6.1f} s  {load}"
    judged = ""
    if outcome.holdout is not None:
        judged = f"{'holdout ok' if outcome.holdout else 'holdout FAILS':<13} "
        judged += f"{'= released' if outcome.released else 'differs':<10} "
    print(f"  {outcome.name:<22} {mark:<15} {timing}  {judged}{outcome.status:<10} {outcome.note}", flush=True)


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


def real_bugs(names: list[str]) -> list[dict[str, object]]:
    bugs: list[dict[str, object]] = json.loads((REAL / "bugs.json").read_text(encoding="utf-8"))
    return [b for b in bugs if not names or b["name"] in names]


def plant(bug: dict[str, object], work: Path, planted: bool = True) -> None:
    """A copy of the bug's library in ``work`` with the bug planted (``planted``) and its test."""
    library = str(bug["library"])
    work.mkdir(parents=True)
    shutil.copytree(REAL / "libs" / library, work / library, ignore=shutil.ignore_patterns("__pycache__"))
    for edit in bug["plant"] if planted else []:  # type: ignore[attr-defined]
        target = work / edit["path"]
        text = target.read_text(encoding="utf-8")
        if text.count(edit["old"]) != 1:
            raise SystemExit(f"{bug['name']}: the planted text does not occur once in {edit['path']}")
        target.write_text(text.replace(edit["old"], edit["new"]), encoding="utf-8")
    (work / f"test_{bug['name']}.py").write_text(str(bug["test"]), encoding="utf-8")


def judge(bug: dict[str, object], work: Path) -> tuple[bool, bool]:
    """After the run: the bug's holdout test passes in ``work``, and its planted files are as released.

    The holdout is written only now, run with the bench's own pytest on that file alone, and removed.
    """
    held = work / f"test_{bug['name']}_holdout.py"
    held.write_text(str(bug["holdout"]), encoding="utf-8")
    try:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", held.name]
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        passes = subprocess.run(argv, cwd=work, env=env, capture_output=True, check=False).returncode == 0
    finally:
        held.unlink()
    paths = {str(edit["path"]) for edit in bug["plant"]}  # type: ignore[attr-defined]
    library = REAL / "libs"
    released = all((work / p).is_file() and (work / p).read_bytes() == (library / p).read_bytes() for p in paths)
    return passes, released


def validate(bugs: list[dict[str, object]]) -> None:
    """Each test passes on the library as released and fails with the bug planted; each holdout
    passes on the library as released."""
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    broken = 0
    for bug in bugs:
        verdicts = []
        for planted in (False, True):
            with tempfile.TemporaryDirectory(prefix="bench-real-") as folder:
                work = Path(folder) / str(bug["name"])
                plant(bug, work, planted)
                verdicts.append(subprocess.run(pytest, cwd=work, capture_output=True, check=False).returncode)
                if not planted:
                    holdout, _ = judge(bug, work)
        ok = verdicts[0] == 0 and verdicts[1] != 0 and holdout
        broken += not ok
        held = "passes" if holdout else "FAILS"
        print(
            f"  {bug['name']:<22} {'ok' if ok else 'BROKEN'} (released: rc {verdicts[0]}, planted: rc {verdicts[1]}, "
            f"holdout on released: {held})"
        )
    if broken:
        raise SystemExit(f"{broken} of {len(bugs)} bugs are broken: fix their test or holdout in bugs.json")


def bench_real(bugs: list[dict[str, object]], limit: float) -> None:
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    print("real-library bugs (evals/real_bugs), guided repair on:", flush=True)
    outcomes = []
    for bug in bugs:
        label = f"{bug['name']} ({bug['library']}, {bug['kind']})"
        env = {"PROTOAGENT_GUIDED_REPAIR": "on"}
        source = functools.partial(plant, bug)
        outcome = run_once(
            str(bug["name"]), source, str(bug["objective"]), env, limit, pytest, functools.partial(judge, bug)
        )
        show(replace(outcome, name=label[:60]))
        outcomes.append(outcome)
    fixed = sum(o.fixed for o in outcomes)
    held = sum(o.fixed and bool(o.holdout) for o in outcomes)
    released = sum(o.fixed and bool(o.released) for o in outcomes)
    dishonest = sum(o.note.startswith("DISHONEST") for o in outcomes)
    times = ", ".join(f"{o.seconds:.0f}" for o in outcomes if o.fixed)
    print(f"  => real bugs: {fixed}/{len(outcomes)} fixed and verified; {dishonest} dishonest reports")
    print(f"     fixed and verified and also passes the held-out test: {held}/{len(outcomes)}")
    print(f"     fixed and verified with every planted file equal to the released one: {released}/{len(outcomes)}")
    print(f"     fix times (s): {times or '-'}; longest run {max((o.seconds for o in outcomes), default=0):.1f} s\n")


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
    parser.add_argument("--real", action="store_true", help="the real-library set (evals/real_bugs) only")
    parser.add_argument("--validate", action="store_true", help="check the real-library set's tests, run nothing")
    args = parser.parse_args()
    chosen = [n for n in args.bugs.split(",") if n]
    print(f"cores: {os.cpu_count()}  load average: {os.getloadavg()[0]:.2f}\n", flush=True)
    if args.validate or args.real:
        (validate if args.validate else lambda b: bench_real(b, args.limit))(real_bugs(chosen))
        return
    names = chosen or sorted(p.name for p in BUGS.iterdir() if p.is_dir())
    if not args.no_bugs:
        bench_bugs(names, ["on"] if args.no_off else ["on", "off"], args.limit)
    if not args.no_demo:
        bench_demo(args.seeds, args.limit)


if __name__ == "__main__":
    main()
