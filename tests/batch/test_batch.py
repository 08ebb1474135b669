"""``protoagent batch`` as a user drives it: the evals suite, both engines, resume, a shared store."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from protoagent.testing import make_repo, tool_turn, write_script

REPO_ROOT = Path(__file__).resolve().parents[2]
SUITE = REPO_ROOT / "evals" / "smoke.jsonl"
EXE = [sys.executable, "-m", "protoagent"]
VOLATILE = ("session_id", "wall_s")
pytestmark = pytest.mark.xdist_group("ray")  # Ray workers are found by name: one Ray test at a time


def batch(
    home: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``protoagent batch`` with its own data home and the default (SQLite) store."""
    base = {k: v for k, v in os.environ.items() if k != "PROTOAGENT_STORE"} if env is None else env
    full_env = {**base, "PROTOAGENT_HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"}
    return subprocess.run(
        [*EXE, "batch", *args], env=full_env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )


def results(out: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == len({r["id"] for r in rows}), "a task was counted twice"
    return {r["id"]: r for r in rows}


def stable(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {k: {f: v for f, v in r.items() if f not in VOLATILE} for k, r in rows.items()}


def suite_ids() -> list[str]:
    return [json.loads(line)["id"] for line in SUITE.read_text().splitlines() if line.strip()]


@dataclass(frozen=True)
class LocalRun:
    """The evals suite run once on the local pool; several tests read the same run."""

    done: subprocess.CompletedProcess[str]
    out: Path
    original: str
    """The example repository's ``dates.py`` before the run."""


@pytest.fixture(scope="module")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> LocalRun:
    tmp = tmp_path_factory.mktemp("local-run")
    original = (REPO_ROOT / "examples" / "date-parser" / "dates.py").read_text()
    done = batch(tmp / "home", str(SUITE), "--out", str(tmp / "out"), "--workers", "2")
    return LocalRun(done, tmp / "out", original)


def test_evals_suite_runs_on_the_local_pool_and_every_expectation_holds(local_run: LocalRun) -> None:
    done = local_run.done
    assert done.returncode == 0, done.stderr + done.stdout
    rows = results(local_run.out)
    assert sorted(rows) == sorted(suite_ids())
    assert all(r["expect_held"] is not False for r in rows.values()), rows
    assert rows["fix-dates"]["verified"] is True and rows["fix-dates"]["model_calls"] >= 3
    assert "verified" in done.stdout and "expect held 100%" in done.stdout
    summary = json.loads((local_run.out / "summary.json").read_text())
    assert summary["total"] == len(rows) and summary["expect_rate"] == 1.0


def test_tasks_never_touch_the_original_repository(local_run: LocalRun) -> None:
    assert local_run.done.returncode == 0, local_run.done.stderr
    assert results(local_run.out)["fix-dates"]["applied"] is True
    assert (REPO_ROOT / "examples" / "date-parser" / "dates.py").read_text() == local_run.original


@pytest.mark.slow
def test_local_and_ray_engines_give_identical_results(tmp_path: Path, local_run: LocalRun) -> None:
    assert local_run.done.returncode == 0, local_run.done.stderr
    ray = batch(tmp_path / "h2", str(SUITE), "--out", str(tmp_path / "ray"), "--engine", "ray", "--workers", "2")
    assert ray.returncode == 0, ray.stderr
    assert stable(results(local_run.out)) == stable(results(tmp_path / "ray"))


def _slow_suite(tmp_path: Path, count: int, sleep_s: float) -> Path:
    """Verification tasks whose one check sleeps, so each task takes a while (no model needed)."""
    repo = make_repo(tmp_path / "repo", {"README.md": "slow tasks\n"})
    sleep = shutil.which("sleep") or "/bin/sleep"
    check = {"id": "slow", "argv": [sleep, str(sleep_s)], "cwd": ".", "env": {}, "paths": ["README.md"]}
    lines = [
        {
            "id": f"slow-{i}",
            "objective": f"run the checks ({i})",
            "repo": str(repo),
            "model": "local",
            "approval": "auto",
            "surface": "verification",
            "checks": [check],
        }
        for i in range(count)
    ]
    suite = tmp_path / "slow.jsonl"
    suite.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return suite


def test_resume_after_ctrl_c_runs_only_the_missing_tasks(tmp_path: Path) -> None:
    suite = _slow_suite(tmp_path, 4, 0.5)  # three tasks still to run when the first result is in
    home, out = tmp_path / "home", tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PROTOAGENT_STORE"}
    proc = subprocess.Popen(
        [*EXE, "batch", str(suite), "--out", str(out), "--workers", "1"],
        env={**env, "PROTOAGENT_HOME": str(home)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if (out / "results.jsonl").exists() and (out / "results.jsonl").read_text().count("\n") >= 1:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    first = results(out)
    assert 1 <= len(first) < 4 and "--resume" in err
    again = batch(home, str(suite), "--out", str(out), "--workers", "1", "--resume", env=env)
    assert again.returncode == 0, again.stderr
    assert f"resuming: {len(first)} of 4" in again.stderr
    final = results(out)
    assert sorted(final) == [f"slow-{i}" for i in range(4)]
    assert all(final[k] == v for k, v in first.items()), "a finished task ran again"


def test_bad_suite_line_is_one_clear_error_and_nothing_runs(tmp_path: Path) -> None:
    suite = tmp_path / "bad.jsonl"
    suite.write_text('{"id": "a", "objective": "x", "repo": "."}\n{"id": "a", "objective": "y"}\n')
    done = batch(tmp_path / "home", str(suite), "--out", str(tmp_path / "out"))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "bad.jsonl:2: repo: Field required" in done.stderr
    assert not (tmp_path / "out" / "results.jsonl").exists()


def _ray_worker_pids() -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if cmdline.startswith(b"ray::run_one"):
            pids.append(int(entry.name))
    return pids


@pytest.mark.slow
def test_ray_worker_killed_mid_task_is_retried_and_counted_once(tmp_path: Path) -> None:
    suite = _slow_suite(tmp_path, 1, 6)
    home, out = tmp_path / "home", tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PROTOAGENT_STORE"}
    proc = subprocess.Popen(
        [*EXE, "batch", str(suite), "--out", str(out), "--engine", "ray", "--workers", "1"],
        env={**env, "PROTOAGENT_HOME": str(home), "RAY_USAGE_STATS_ENABLED": "0"},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    victims: list[int] = []
    while not victims and time.monotonic() < deadline and proc.poll() is None:
        victims = _ray_worker_pids()
        time.sleep(0.1)
    if not victims:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the Ray task was never seen running (exit {proc.returncode}):\n{err[-2000:]}\n{out[-500:]}")
    time.sleep(1.0)
    killed = 0
    for pid in victims:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except ProcessLookupError:
            pass
    assert killed, "the Ray worker ended before it could be killed"
    stdout, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err + stdout
    rows = results(out)
    assert list(rows) == ["slow-0"] and rows["slow-0"]["checks"][0]["outcome"] == "passed"
    listed = subprocess.run(
        [*EXE, "sessions", "list", "--json"],
        env={**env, "PROTOAGENT_HOME": str(home)},
        capture_output=True,
        text=True,
        check=True,
    )
    # The retry's session is the one the row names; a killed attempt may have left a partial one.
    sessions = {s["session_id"] for s in json.loads(listed.stdout)}
    assert rows["slow-0"]["session_id"] in sessions and 1 <= len(sessions) <= 2


requires_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@requires_git
def test_git_url_task_runs_on_a_clone_at_its_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "origin", {"VERSION": "one\n"})
    first = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True)
    (repo / "VERSION").write_text("two\n")
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two"], cwd=repo, check=True)
    script = write_script(
        tmp_path / "turns.jsonl",
        [tool_turn("read_file", role="architect", path="VERSION"), {"role": "architect", "text": "done"}],
    )
    task = {
        "id": "clone",
        "objective": "what is the version?",
        "repo": f"file://{repo}",
        "commit": first.stdout.strip(),
        "model": f"scripted:{script}",
        "surface": "question",
    }
    suite = tmp_path / "suite.jsonl"
    suite.write_text(json.dumps(task) + "\n")
    done = batch(tmp_path / "home", str(suite), "--out", str(tmp_path / "out"), "--workers", "1")
    assert done.returncode == 0, done.stderr
    session = results(tmp_path / "out")["clone"]["session_id"]
    shown = subprocess.run(
        [*EXE, "sessions", "show", session, "--json"],
        env={**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")},
        capture_output=True,
        text=True,
        check=True,
    )
    outputs = [e["payload"].get("output", "") for e in json.loads(shown.stdout)["events"] if e["type"] == "tool.ended"]
    assert any("one" in o for o in outputs) and not any("two" in o for o in outputs)
