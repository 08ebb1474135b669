"""Per-step cost of the agent loop as a session grows, side by side with mini-swe-agent.

Method
------
ProtoAgent: the agent loop (``protoagent.testing.agent_turn.run_preset_turn``) with the
``coding`` preset (its step limit raised to N + 1), the SQLite store, approval ``auto``, sandbox
``off`` (``BENCH_SANDBOX=auto`` for the SDK default) and a scripted model that issues N ``shell``
calls (``echo hi # i``) and then answers. The run's model-call budget (``max_model_calls``)
is N + 1, so every step calls the model; the script asserts it (N + 1 ``model.requested``
events, a completed run, N successful tool results).

mini-swe-agent 2.x (optional, ``pip install -e '.[bench]'``): ``DefaultAgent`` with its
deterministic test model and ``LocalEnvironment``, no trajectory file, the same N
``echo hi # i`` commands and then its submit command.

Each round runs every N for both agents, interleaved (ProtoAgent, mini, ProtoAgent, ...) so
that load on the shared machine falls on both alike. Figures are medians over the rounds:

- per call: the run's wall time divided by its model calls;
- harness only: per call minus a bare ``subprocess.run`` of the same command, measured in
  the same process in the same round (what the agent adds on top of running the command);
- growth: per call at N = 400 over per call at N = 50 (1.0 is flat);
- first/last 10: median step time of the first and the last ten steps of ProtoAgent's run
  (from the ``model.requested`` timestamps), which shows whether steps slow down as history grows;
- ratio: ProtoAgent's per-call time over mini-swe-agent's, per round, then the median;
- for information, with ``BENCH_SANDBOX=off`` (the default): ProtoAgent's per-call time at
  N = 200 with the sandbox on (``auto``: bubblewrap when installed), median of the rounds.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from protoagent.agents.presets import get_preset
from protoagent.api import HOME_ENV
from protoagent.events import SQLiteStore
from protoagent.events.types import Event
from protoagent.testing import ScriptedModel, final_turn, make_repo, tool_turn
from protoagent.testing.agent_turn import run_preset_turn

SIZES = (50, 200, 400)
INFO_SIZE = 200
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
SANDBOX = os.environ.get("BENCH_SANDBOX", "off")
"""``off`` compares like for like with mini-swe-agent's unconfined ``LocalEnvironment``;
``auto`` (the SDK default) measures ProtoAgent's commands inside bubblewrap when it is installed."""


@dataclass(frozen=True, slots=True)
class Sample:
    per_call_ms: float
    calls: int
    step_ms: tuple[float, ...] = ()


def bare_command_ms(cwd: Path, runs: int = 30) -> float:
    """A bare ``subprocess.run`` of the benchmark command, median in milliseconds."""
    times = []
    for i in range(runs):
        started = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", f"echo hi # {i}"], cwd=cwd, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def protoagent_run(n: int, tmp: Path, sandbox: str = SANDBOX) -> Sample:
    repo = make_repo(tmp / f"repo-{n}", {"README.md": "bench\n"}, git=False)
    turns = [tool_turn("shell", command=f"echo hi # {i}") for i in range(n)] + [final_turn("done")]
    model = ScriptedModel.from_lines(turns)
    stamps: list[float] = []
    ended: list[Event] = []

    def on_event(event: Event) -> None:
        if event.type == "model.requested":
            stamps.append(time.perf_counter())
        elif event.type == "tool.ended" and event.payload.get("status") == "ok":
            ended.append(event)

    preset = replace(get_preset("coding"), max_steps=n + 1)
    with SQLiteStore(tmp / f"steps-{n}.sqlite") as store:
        started = time.perf_counter()
        _, outcome = asyncio.run(
            run_preset_turn(
                "run the commands",
                repo=repo,
                model="scripted:bench",
                store=store,
                approval="auto",
                preset=preset,
                provider=model,
                on_event=on_event,
                max_model_calls=n + 1,
                sandbox=sandbox,
            )
        )
        wall = time.perf_counter() - started
    calls = len(model.requests)
    assert outcome.status == "completed" and outcome.text == "done", outcome
    assert calls == n + 1 and len(stamps) == n + 1, f"only {calls} of {n + 1} steps called the model"
    assert len(ended) == n, f"{len(ended)} of {n} shell calls succeeded"
    steps = tuple((b - a) * 1000 for a, b in itertools.pairwise(stamps))
    return Sample(wall / calls * 1000, calls, steps)


def mini_runner() -> Callable[[int, Path], Sample] | None:
    """mini-swe-agent's DefaultAgent, when the ``bench`` extra is installed."""
    try:
        from minisweagent.agents.default import DefaultAgent
        from minisweagent.environments.local import LocalEnvironment
        from minisweagent.models.test_models import DeterministicModel, make_output
    except ImportError:
        return None

    def run(n: int, tmp: Path) -> Sample:
        cwd = tmp / f"mini-{n}"
        cwd.mkdir(exist_ok=True)
        outputs: list[dict[str, Any]] = [make_output("", [{"command": f"echo hi # {i}"}]) for i in range(n)]
        outputs.append(make_output("", [{"command": "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"}]))
        model = DeterministicModel(outputs=outputs)  # type: ignore[no-untyped-call]
        env = LocalEnvironment(cwd=str(cwd))
        agent = DefaultAgent(
            model, env, system_template="You run commands.", instance_template="{{task}}", step_limit=0, cost_limit=0
        )
        started = time.perf_counter()
        info = agent.run("run the commands")
        wall = time.perf_counter() - started
        assert info.get("exit_status") == "Submitted" and agent.n_calls == n + 1, info
        return Sample(wall / agent.n_calls * 1000, agent.n_calls)

    return run


def first_last(steps: tuple[float, ...]) -> tuple[float, float]:
    return statistics.median(steps[:10]), statistics.median(steps[-10:])


def main() -> None:
    mini = mini_runner()
    ours: dict[int, list[Sample]] = {n: [] for n in SIZES}
    theirs: dict[int, list[Sample]] = {n: [] for n in SIZES}
    bare: list[float] = []
    sandboxed: list[Sample] = []
    with tempfile.TemporaryDirectory() as raw:
        tmp = Path(raw)
        os.environ[HOME_ENV] = str(tmp / "home")
        for round_ in range(ROUNDS):
            bare.append(bare_command_ms(tmp))
            for n in SIZES:
                run_dir = tmp / f"round-{round_}"
                run_dir.mkdir(exist_ok=True)
                ours[n].append(protoagent_run(n, run_dir))
                if mini is not None:
                    theirs[n].append(mini(n, run_dir))
            if SANDBOX == "off":
                info_dir = tmp / f"round-{round_}" / "sandboxed"
                info_dir.mkdir()
                sandboxed.append(protoagent_run(INFO_SIZE, info_dir, "auto"))
    report(ours, theirs, statistics.median(bare), mini is not None)
    if sandboxed:
        per_call = statistics.median(s.per_call_ms for s in sandboxed)
        print(
            f"  for information, sandbox 'auto' (bubblewrap when installed): N={INFO_SIZE} per call {per_call:.2f} ms"
        )


def report(ours: dict[int, list[Sample]], theirs: dict[int, list[Sample]], bare: float, with_mini: bool) -> None:
    print(
        f"per-step cost, {ROUNDS} interleaved rounds, medians, ProtoAgent sandbox {SANDBOX!r}; "
        f"bare subprocess.run of the command: {bare:.2f} ms"
    )
    for n in SIZES:
        per_call = statistics.median(s.per_call_ms for s in ours[n])
        first, last = first_last(ours[n][len(ours[n]) // 2].step_ms)
        line = (
            f"  N={n:<4} ProtoAgent per call {per_call:6.2f} ms, harness only {per_call - bare:5.2f} ms "
            f"(target < 5 ms), first/last 10 steps {first:.2f}/{last:.2f} ms"
        )
        if with_mini:
            mini = statistics.median(s.per_call_ms for s in theirs[n])
            ratio = statistics.median(a.per_call_ms / b.per_call_ms for a, b in zip(ours[n], theirs[n], strict=True))
            line += f"; mini-swe-agent {mini:6.2f} ms (harness only {mini - bare:5.2f} ms), ratio {ratio:.2f}"
        print(line)
    growth = statistics.median(s.per_call_ms for s in ours[SIZES[-1]]) / statistics.median(
        s.per_call_ms for s in ours[SIZES[0]]
    )
    print(f"  growth per call (N={SIZES[-1]}) / (N={SIZES[0]}): {growth:.2f} (target <= 1.2)")
    if with_mini:
        ratios = [a.per_call_ms / b.per_call_ms for n in SIZES for a, b in zip(ours[n], theirs[n], strict=True)]
        print(
            f"  ProtoAgent / mini-swe-agent per call, median over all runs: {statistics.median(ratios):.2f} "
            "(target <= 0.8)"
        )
    else:
        print("  mini-swe-agent not installed: pip install -e '.[bench]' for the side-by-side figures", file=sys.stderr)


if __name__ == "__main__":
    main()
