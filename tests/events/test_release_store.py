"""A store written by the previous release (``tests/fixtures/make_release_store.py`` run on that
release's code) loads with today's code and renders exactly as that release rendered it: the
CLI's ``sessions show`` (text and JSON), the SDK's report, and the web's session row and changes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.fixtures.make_release_store import web_views

from protoagent.api import read_report
from protoagent.events import SQLiteStore

FIXTURES = Path(__file__).parent.parent / "fixtures"
STORE = FIXTURES / "release-store.sqlite"
SESSION = json.loads((FIXTURES / "release-store.report.json").read_text())["session_id"]


def _show(home: Path, *args: str) -> str:
    env = {**os.environ, "PROTOAGENT_HOME": str(home), "TZ": "UTC"}
    done = subprocess.run(
        [sys.executable, "-m", "protoagent", "sessions", "show", SESSION, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


def test_a_store_written_by_the_previous_release_loads_and_renders_identically(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    shutil.copyfile(STORE, home / "sessions.sqlite")
    with SQLiteStore(home / "sessions.sqlite") as store:
        events = store.load(SESSION)
        report = read_report(SESSION, store)
    assert report == json.loads((FIXTURES / "release-store.report.json").read_text())
    assert json.loads(_show(home, "--json")) == json.loads((FIXTURES / "release-store.show.json").read_text())
    assert _show(home) == (FIXTURES / "release-store.show.txt").read_text()
    with SQLiteStore(home / "sessions.sqlite") as store:
        web = json.loads(json.dumps(web_views(store, SESSION)))
    assert web == json.loads((FIXTURES / "release-store.web.json").read_text())
    kinds = {e.type for e in events}
    assert {"worker.started", "tool.ended", "evidence.reported", "run.ended"} <= kinds
    assert {e.agent for e in events} >= {"architect", "tester", "coder", "verifier"}
