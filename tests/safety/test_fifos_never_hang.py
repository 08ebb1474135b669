"""Item 10: a FIFO anywhere the harness reads (made by the model's own sandboxed ``mkfifo``, or
planted as AGENTS.md, an agent file, SKILL.md or .mcp.json) is refused at once, never waited on:
the run ends on its own, its check runs, and the store holds its whole log."""

from __future__ import annotations

import json
import os
from pathlib import Path

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

from .support import cli

PLANTED = ("AGENTS.md", ".mcp.json", ".protoagent/agents/coding/evil.md", ".agents/skills/evil/SKILL.md", "src/x.py")


def test_fifos_in_the_workspace_and_its_harness_files_never_hang_a_run_or_its_check(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"test_a.py": "def test_a():\n    assert True\n"})
    for rel in PLANTED:
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        os.mkfifo(repo / rel)
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("execute_command", role="architect", argv=["mkfifo", "made.fifo"]),
            tool_turn("run_check", role="architect", check_id="pytest"),
            # The check's own test file becomes a FIFO: the evidence must not wait on it.
            tool_turn("execute_command", role="architect", argv=["sh", "-c", "rm test_a.py && mkfifo test_a.py"]),
            final_turn("made a pipe and ran the tests", role="architect"),
        ],
    )
    home = tmp_path / "home"
    args = ["--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", "--surface", "editing"]
    done = cli(home, "run", *args, "--json", "do the tests pass?", timeout=90)
    assert done.returncode in (0, 3), done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    shown = cli(home, "sessions", "show", report["session_id"], "--json")
    events = json.loads(shown.stdout)["events"]
    ended = {e["payload"]["tool"]: e["payload"] for e in events if e["type"] == "tool.ended"}
    assert ended["execute_command"]["status"] == "ok", "the model's mkfifo must really have run"
    assert os.path.exists(repo / "test_a.py") and not os.path.isfile(repo / "test_a.py")
    assert ended["run_check"]["status"] == "ok" and "passed" in ended["run_check"]["output"]
    assert os.path.exists(repo / "made.fifo") and events[-1]["type"] == "run.ended"


def test_a_fifo_project_json_is_a_one_line_error_not_a_hang(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"test_a.py": "def test_a():\n    assert True\n"})
    (repo / ".protoagent").mkdir()
    os.mkfifo(repo / ".protoagent/project.json")
    script = write_script(tmp_path / "turns.jsonl", [final_turn("done", role="architect")])
    done = cli(
        tmp_path / "home",
        "run",
        "--model",
        f"scripted:{script}",
        "--repo",
        str(repo),
        "--surface",
        "editing",
        "fix the tests",
        timeout=60,
    )
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 2 and len(lines) == 1, done.stdout + done.stderr
    assert "project.json" in lines[0] and "not a regular file" in lines[0]
