"""The CLI as a user drives it: real subprocesses, a temporary repository and data home."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

EXE = [sys.executable, "-m", "protoagent"]


def cli(home: Path, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    return subprocess.run(
        [*EXE, *args], env=env, capture_output=True, text=True, check=check, timeout=120, stdin=subprocess.DEVNULL
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})


def scripted_question(tmp_path: Path) -> Path:
    return write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("read_file", role="architect", path="dates.py"),
            final_turn("parse_date is defined in dates.py line 1.", role="architect"),
        ],
    )


def test_run_with_scripted_model_completes_and_prints_one_json_object(tmp_path: Path, repo: Path) -> None:
    script = scripted_question(tmp_path)
    result = cli(
        tmp_path / "home",
        "run",
        "--model",
        f"scripted:{script}",
        "--repo",
        str(repo),
        "--json",
        "where is parse_date defined?",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "completed" and report["surface"] == "question"
    for key in ("session_id", "applied", "verified", "criteria_supported", "changed_files", "checks"):
        assert key in report


def test_sessions_show_lists_events_in_order_and_reloads_identically(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    script = scripted_question(tmp_path)
    run = cli(home, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--json", "where is parse_date?")
    session_id = json.loads(run.stdout)["session_id"]
    first = json.loads(cli(home, "sessions", "show", session_id, "--json", check=True).stdout)
    types = [e["type"] for e in first["events"]]
    assert types[0] == "session.created"
    order = [
        types.index(t)
        for t in (
            "session.created",
            "user.message",
            "model.requested",
            "model.completed",
            "tool.started",
            "tool.ended",
            "run.ended",
        )
    ]
    assert order == sorted(order)
    assert [e["seq"] for e in first["events"]] == list(range(1, len(types) + 1))
    second = json.loads(cli(home, "sessions", "show", session_id, "--json", check=True).stdout)
    assert second == first
    listed = json.loads(cli(home, "sessions", "list", "--json", check=True).stdout)
    assert [s["session_id"] for s in listed] == [session_id]


def test_corrupted_session_is_refused_and_others_still_load(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    ids = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        script = scripted_question(tmp_path / name)
        run = cli(home, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--json", "where is it?")
        ids.append(json.loads(run.stdout)["session_id"])
    db = sqlite3.connect(home / "sessions.sqlite")
    db.execute("UPDATE events SET payload = '{broken' WHERE session_id = ? AND seq = 3", (ids[0],))
    db.execute("UPDATE sessions SET format_version = 9 WHERE session_id = ?", (ids[1],))
    db.commit()
    db.close()
    bad = cli(home, "sessions", "show", ids[0])
    assert bad.returncode == 2 and f"session {ids[0]!r} cannot be loaded" in bad.stderr and "seq 3" in bad.stderr
    future = cli(home, "sessions", "show", ids[1])
    assert future.returncode == 2 and "format version 9 is newer" in future.stderr
    good = cli(tmp_path / "home2", "sessions", "list", "--json", check=True)
    assert json.loads(good.stdout) == []


def test_unknown_model_provider_is_a_clear_usage_error(tmp_path: Path, repo: Path) -> None:
    result = cli(tmp_path / "home", "run", "--model", "gpt4", "--repo", str(repo), "fix it")
    assert result.returncode == 2
    assert "unknown model provider 'gpt4'" in result.stderr and "scripted" in result.stderr


def test_exhausted_script_fails_the_run_loudly(tmp_path: Path, repo: Path) -> None:
    script = write_script(tmp_path / "turns.jsonl", [tool_turn("read_file", role="architect", path="dates.py")])
    result = cli(
        tmp_path / "home", "run", "--model", f"scripted:{script}", "--repo", str(repo), "--json", "where is parse_date?"
    )
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["status"] == "failed" and "exhausted" in report["summary"]


def test_ask_policy_without_a_terminal_denies_and_says_how_to_approve(tmp_path: Path, repo: Path) -> None:
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("coder", role="architect", task="create notes.md"),
            tool_turn("create_file", role="coder", path="notes.md", content="hi\n"),
            final_turn("could not", role="coder"),
            final_turn("the write was denied", role="architect"),
        ],
    )
    result = cli(
        tmp_path / "home",
        "run",
        "--model",
        f"scripted:{script}",
        "--repo",
        str(repo),
        "--approval",
        "ask",
        "add a notes file",
    )
    assert not (repo / "notes.md").exists()
    assert "--approval auto-edit" in result.stdout


def test_help_lists_the_commands(tmp_path: Path) -> None:
    result = cli(tmp_path, "--help", check=True)
    for command in ("run", "sessions", "checks", "models"):
        assert command in result.stdout


def test_agents_tester_off_removes_the_tester_from_later_runs(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    assert "tester: on" in cli(home, "agents", check=True).stdout
    assert "tester: off" in cli(home, "agents", "tester", "off", check=True).stdout
    script = write_script(tmp_path / "turns.jsonl", [final_turn("nothing to do", role="architect")])
    run = cli(home, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--json", "fix parse_date")
    session_id = json.loads(run.stdout)["session_id"]
    events = json.loads(cli(home, "sessions", "show", session_id, "--json", check=True).stdout)["events"]
    offered = next(e for e in events if e["type"] == "model.requested")["payload"]["tool_names"]
    assert "coder" in offered and "tester" not in offered
    assert cli(home, "agents", "nobody", "off").returncode == 2


def test_bang_command_runs_through_the_same_pipeline_and_formatter(tmp_path: Path, repo: Path) -> None:
    home = tmp_path / "home"
    result = cli(home, "run", "--repo", str(repo), "--approval", "auto", "--json", "!echo hello from the shell")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["surface"] == "command" and "hello from the shell" in report["summary"]
    events = json.loads(cli(home, "sessions", "show", report["session_id"], "--json", check=True).stdout)["events"]
    kinds = [e["type"] for e in events]
    assert kinds[:5] == ["session.created", "tool.started", "approval.requested", "approval.decided", "tool.ended"]
    ended = events[4]["payload"]
    assert ended["tool"] == "shell" and ended["artifact"] == ended["data"]["artifact"]
    assert not [e for e in events if e["type"].startswith("model.")]


def test_bang_command_is_denied_without_a_terminal_under_ask(tmp_path: Path, repo: Path) -> None:
    marker = repo / "made-by-command"
    result = cli(tmp_path / "home", "run", "--repo", str(repo), "--json", f"!touch {marker}")
    assert result.returncode == 3
    assert not marker.exists()
    assert "denied" in json.loads(result.stdout)["summary"]


def test_interrupted_run_records_cancellation_and_leaves_no_process(tmp_path: Path, repo: Path) -> None:
    import signal
    import time

    marker = repo / "child.pid"  # inside the workspace: the sandbox confines the command's writes
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn(
                "execute_command",
                role="architect",
                argv=[
                    "python",
                    "-c",
                    f"import os,time; open({str(marker)!r},'w').write(str(os.getpid())); time.sleep(60)",
                ],
            ),
        ],
    )
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    proc = subprocess.Popen(
        [
            *EXE,
            "run",
            "--model",
            f"scripted:{script}",
            "--repo",
            str(repo),
            "--approval",
            "auto",
            "--sandbox",
            "off",  # the child's pid is then the host's pid (a sandbox gives it its own namespace)
            "--json",
            "add a slow step",
        ],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.exists(), "the command never started"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and "interrupted" in err
    child = int(marker.read_text())
    time.sleep(0.2)
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]
    listed = json.loads(cli(tmp_path / "home", "sessions", "list", "--json", check=True).stdout)
    events = json.loads(
        cli(tmp_path / "home", "sessions", "show", listed[0]["session_id"], "--json", check=True).stdout
    )["events"]
    assert events[-1]["type"] == "run.ended" and events[-1]["payload"]["status"] == "cancelled"
