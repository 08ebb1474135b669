"""Ctrl-C during a command: the call still ends in the log (``tool.ended``, marked cancelled)
with the output the command had written, and the run ends cancelled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from protoagent.testing import make_repo, tool_turn, write_script

EXE = [sys.executable, "-m", "protoagent"]


def test_an_interrupted_command_records_tool_ended_with_its_output_so_far(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "x\n"})
    marker = repo / "started"
    code = f"import time; print('partial-output-marker', flush=True); open({str(marker)!r}, 'w'); time.sleep(60)"
    script = write_script(
        tmp_path / "turns.jsonl", [tool_turn("execute_command", role="architect", argv=["python", "-c", code])]
    )
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    run = [*EXE, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", "--json"]
    proc = subprocess.Popen(
        [*run, "run a slow step"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert marker.exists(), "the command never started"
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == 130

    def cli(*args: str) -> str:
        done = subprocess.run([*EXE, *args], env=env, capture_output=True, text=True, check=True, timeout=60)
        return done.stdout

    session_id = json.loads(cli("sessions", "list", "--json"))[0]["session_id"]
    events = json.loads(cli("sessions", "show", session_id, "--json"))["events"]
    ended = [e["payload"] for e in events if e["type"] == "tool.ended" and e["payload"]["tool"] == "execute_command"]
    assert len(ended) == 1, "the cancelled command has its tool.ended"
    assert ended[0]["status"] == "error" and ended[0]["data"]["cancelled"] is True
    assert "partial-output-marker" in ended[0]["output"]
    assert events[-1]["type"] == "run.ended" and events[-1]["payload"]["status"] == "cancelled"
