"""Item 12: two runs on one session at once. The second, from another process, is refused with one
line naming the holder's pid and exit 2, before it appends anything; the first run's log stays whole
(its ``tool.ended`` and ``run.ended`` are there); once the first has ended the session resumes."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from protoagent.testing import final_turn, make_repo, tool_turn, write_script
from protoagent.testing.postgres import missing_reason, temporary_postgres

from .support import EXE

NO_POSTGRES = missing_reason()


@pytest.fixture(params=["sqlite", "postgres"])
def store_env(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    """The environment naming the session store: the data home's SQLite file, or a PostgreSQL server."""
    if request.param == "sqlite":
        yield {}
        return
    if NO_POSTGRES is not None:
        pytest.skip(f"no PostgreSQL here: {NO_POSTGRES}")
    with temporary_postgres() as url:
        yield {"PROTOAGENT_STORE": url}


def _env(home: Path, store: dict[str, str]) -> dict[str, str]:
    return {**os.environ, "PROTOAGENT_HOME": str(home), **store}


def _cli(home: Path, store: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, *args], env=_env(home, store), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
    )


def _slow_run(tmp_path: Path, home: Path, store: dict[str, str], marker: Path) -> subprocess.Popen[str]:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    wait = f"touch {marker}; sleep 6"
    script = write_script(
        tmp_path / "slow.jsonl",
        [
            tool_turn("execute_command", role="architect", argv=["sh", "-c", wait]),
            final_turn("waited", role="architect"),
        ],
    )
    args = ["run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", "--sandbox", "off"]
    return subprocess.Popen(
        [*EXE, *args, "--surface", "editing", "--json", "wait a little"],
        env=_env(home, store),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def _running_session(home: Path, store: dict[str, str], marker: Path, first: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert first.poll() is None and time.monotonic() < deadline, "the first run must be inside its command"
        time.sleep(0.1)
    listed = json.loads(_cli(home, store, "sessions", "list", "--json").stdout)
    assert len(listed) == 1
    return str(listed[0]["session_id"])


def _events(home: Path, store: dict[str, str], session: str) -> list[dict[str, object]]:
    return list(json.loads(_cli(home, store, "sessions", "show", session, "--json").stdout)["events"])


def test_a_second_run_on_a_running_session_is_refused_in_one_line_and_appends_nothing(
    tmp_path: Path, store_env: dict[str, str]
) -> None:
    home, marker = tmp_path / "home", tmp_path / "started"
    first = _slow_run(tmp_path, home, store_env, marker)
    try:
        session = _running_session(home, store_env, marker, first)
        script = write_script(tmp_path / "second.jsonl", [final_turn("second", role="architect")])
        repo = str(tmp_path / "repo")
        second = _cli(
            home, store_env, "run", "--model", f"scripted:{script}", "--repo", repo, "--resume", session, "again"
        )
        out = (second.stdout + second.stderr).strip()
        assert second.returncode == 2, out
        assert out.splitlines() == [
            f"error: session {session} is running (started by pid {first.pid}); wait for it or stop it"
        ]
        _, stderr = first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert first.returncode in (0, 3), stderr
    assert "Traceback" not in stderr
    types = [e["type"] for e in _events(home, store_env, session)]
    assert "tool.ended" in types and types[-1] == "run.ended"
    assert "session.resumed" not in types, "the refused run must append nothing"
    assert [e["seq"] for e in _events(home, store_env, session)] == list(range(1, len(types) + 1))
    again = _cli(
        home, store_env, "run", "--model", f"scripted:{script}", "--repo", repo, "--resume", session, "--json", "again"
    )
    assert again.returncode in (0, 3), again.stderr
    assert json.loads(again.stdout)["session_id"] == session


def test_the_web_api_refuses_a_session_a_terminal_run_holds_with_409(tmp_path: Path) -> None:
    from tests.web.support import running_server

    home, marker = tmp_path / ".home", tmp_path / "started"
    first = _slow_run(tmp_path, home, {}, marker)
    try:
        session = _running_session(home, {}, marker, first)
        script = write_script(tmp_path / "web.jsonl", [final_turn("second", role="architect")])
        with running_server(tmp_path, store_path=home / "sessions.sqlite") as server, server.client() as client:
            body = {"text": "again", "model": f"scripted:{script}", "surface": "question"}
            refused = client.post(f"/api/sessions/{session}/messages", json=body)
        first.communicate(timeout=120)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    assert refused.status_code == 409, refused.text
    assert refused.json() == {
        "error": f"session {session} is running (started by pid {first.pid}); wait for it or stop it"
    }
    assert "session.resumed" not in [e["type"] for e in _events(home, {}, session)]
