"""T5: kill -9 at random moments leaves every session loadable."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from protoagent.api import STORE_FILE
from protoagent.events.sqlite_store import SQLiteStore
from protoagent.testing import final_turn, make_repo, tool_turn, write_script

KILLS = 8


@pytest.mark.slow
def test_kill_nine_at_random_moments_leaves_every_session_loadable(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {f"m{i}.py": f"value_{i} = {i}\n" for i in range(20)})
    turns = [tool_turn("read_file", role="architect", path=f"m{i % 20}.py") for i in range(60)]
    script = write_script(tmp_path / "turns.jsonl", [*turns, final_turn("read them", role="architect")])
    home = tmp_path / "home"
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    chance = random.Random(1234)
    for _ in range(KILLS):
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "protoagent",
                "run",
                "--model",
                f"scripted:{script}",
                "--repo",
                str(repo),
                "--json",
                "what values do the modules define?",
            ],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(chance.uniform(0.5, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    with SQLiteStore(home / STORE_FILE) as store:
        sessions = store.list()
        unloadable = []
        for summary in sessions:
            try:
                store.load(summary.session_id)
            except Exception as exc:
                unloadable.append(f"{summary.session_id}: {exc}")
    listed = subprocess.run(
        [sys.executable, "-m", "protoagent", "sessions", "list", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    print(f"T5 kill -9: {len(unloadable)} unloadable sessions of {len(sessions)} after {KILLS} kills")
    assert unloadable == []
    assert len(json.loads(listed.stdout)) == len(sessions)
