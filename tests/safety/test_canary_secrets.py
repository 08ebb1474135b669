"""T9: secrets in the harness's environment never reach outputs, artifacts or the session store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

CANARY = "CANARY-SECRET-5d1e9b"
SECRET_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_PASSWORD")


def test_canary_secrets_in_the_environment_reach_no_output_artifact_or_store(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("execute_command", role="architect", argv=["env"]),
            tool_turn("execute_command", role="architect", argv=["sh", "-c", "cat /proc/self/environ; set"]),
            tool_turn("search_regex", role="architect", pattern="CANARY", path="."),
            final_turn("looked around", role="architect"),
        ],
    )
    home = tmp_path / "home"
    env = {**os.environ, "PROTOAGENT_HOME": str(home), **{name: f"{CANARY}-{name}" for name in SECRET_VARS}}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "protoagent",
            "run",
            "--model",
            f"scripted:{script}",
            "--repo",
            str(repo),
            "--approval",
            "auto",
            "--surface",
            "editing",
            "--json",
            "what does the environment hold?",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode in (0, 3), done.stderr
    report = json.loads(done.stdout)
    files = [p for p in home.rglob("*") if p.is_file()]
    found = [str(p) for p in files if CANARY.encode() in p.read_bytes()]
    in_output = (done.stdout + done.stderr).count(CANARY)
    ran = subprocess.run(
        [sys.executable, "-m", "protoagent", "sessions", "show", report["session_id"], "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    ended = [e for e in json.loads(ran.stdout)["events"] if e["type"] == "tool.ended"]
    print(f"T9 canaries: {len(found)} files of {len(files)} and {in_output} output lines hold a secret")
    assert len(ended) == 3 and ended[0]["payload"]["status"] == "ok", "the commands must really have run"
    assert "HOME=" in ended[0]["payload"]["output"]
    assert found == [] and in_output == 0
