"""T7: no process survives a run, whether a command times out or the run is stopped by SIGINT,
SIGTERM or SIGHUP: 0 survivors 2 s later, ``run.ended`` with status ``cancelled`` and exit
128 + the signal's number. The command leaves a child in its group and a ``setsid``
double-forked grandchild; the real CLI runs it for the scripted model."""

from __future__ import annotations

import json
import secrets
import signal
import subprocess
import time
from pathlib import Path

import pytest

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

from .support import EXE, cli, kill_marked, marked_processes, mode_env, run_args, skip_reason

TREE = Path(__file__).with_name("tree.py")
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


Started = tuple[subprocess.Popen[str], Path, str, dict[str, str]]


def start_run(tmp_path: Path, mode: str, timeout: float | None) -> Started:
    if (reason := skip_reason(mode)) is not None:
        pytest.skip(reason)
    repo = make_repo(tmp_path / "repo", {"probe/tree.py": TREE.read_text()})
    marker = f"orphan-marker-{secrets.token_hex(6)}"
    argv = ["python3", "probe/tree.py", marker]
    call = tool_turn("execute_command", role="architect", argv=argv)
    if timeout is not None:
        call = tool_turn("execute_command", role="architect", argv=argv, timeout=timeout)
    turns = [call, final_turn("done", role="architect")]
    script = write_script(tmp_path / "turns.jsonl", turns)
    env = mode_env(tmp_path, mode)
    args = ["run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", *run_args(mode)]
    proc = subprocess.Popen(
        [*EXE, *args, "--surface", "editing", "--json", "start the slow tree"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, repo, marker, env


def survivors_after(marker: str) -> int:
    time.sleep(2)
    return len(marked_processes(marker))


def last_run_ended(env: dict[str, str]) -> dict[str, object]:
    listed = json.loads(cli(env, "sessions", "list", "--json").stdout)
    events = json.loads(cli(env, "sessions", "show", listed[-1]["session_id"], "--json").stdout)["events"]
    ended = [e for e in events if e["type"] == "run.ended"]
    return dict(ended[-1]["payload"]) if ended else {}


def stop_with(tmp_path: Path, mode: str, signum: signal.Signals) -> None:
    proc, repo, marker, env = start_run(tmp_path, mode, None)
    try:
        deadline = time.monotonic() + 60
        while not (repo / "probe" / "ready").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert (repo / "probe" / "ready").exists(), "the command tree never started"
        started = len(marked_processes(marker))
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=30)
        left = survivors_after(marker)
    finally:
        proc.kill()
        kill_marked(marker)
    figure = f"{started} marked processes before, {left} survivors 2 s after; exit {proc.returncode}"
    print(f"T7 {mode} {signum.name}: {figure}")
    assert started >= 3 and left == 0
    assert proc.returncode == 128 + signum and "interrupted" in err and "Traceback" not in err
    assert last_run_ended(env).get("status") == "cancelled"


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_stop_signal_leaves_no_survivor_in_the_sandbox(tmp_path: Path, signum: signal.Signals) -> None:
    stop_with(tmp_path, "bwrap", signum)


@pytest.mark.slow
@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: s.name)
def test_stop_signal_leaves_no_survivor_without_a_sandbox(tmp_path: Path, signum: signal.Signals) -> None:
    stop_with(tmp_path, "off", signum)


@pytest.mark.slow
def test_sigterm_leaves_no_survivor_under_landlock(tmp_path: Path) -> None:
    stop_with(tmp_path, "landlock", signal.SIGTERM)


@pytest.mark.parametrize("mode", ["bwrap", "off"])
def test_timeout_leaves_no_survivor(tmp_path: Path, mode: str) -> None:
    proc, _, marker, env = start_run(tmp_path, mode, 2)
    try:
        proc.communicate(timeout=60)
        left = survivors_after(marker)
    finally:
        proc.kill()
        kill_marked(marker)
    print(f"T7 {mode} timeout: {left} survivors 2 s after the run; exit {proc.returncode}")
    assert left == 0 and proc.returncode in (0, 1, 3)
    assert last_run_ended(env).get("status") in ("completed", "incomplete", "failed")


def test_a_harness_killed_with_sigkill_leaves_no_survivor_in_the_sandbox(tmp_path: Path) -> None:
    """The bubblewrap launcher sits between the harness and bwrap: when the harness dies without
    a chance to stop anything, the launcher kills bwrap, and bwrap's sandbox dies with it."""
    proc, repo, marker, _ = start_run(tmp_path, "bwrap", None)
    try:
        deadline = time.monotonic() + 60
        while not (repo / "probe" / "ready").exists() and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert (repo / "probe" / "ready").exists(), "the command tree never started"
        started = len(marked_processes(marker))
        proc.kill()
        proc.communicate(timeout=30)
        left = survivors_after(marker)
    finally:
        kill_marked(marker)
    print(f"T7 bwrap harness SIGKILL: {started} marked processes before, {left} survivors 2 s after")
    assert started >= 3 and left == 0
