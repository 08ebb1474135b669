"""``protoagent skills list|show|validate|enable|disable|reset`` as a person runs them."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from protoagent.interfaces.cli.app import app

from .support import simple, write_skill


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def _cli(home: Path, *args: str) -> Result:
    """The real command in-process (start-up once); ``_process`` runs it as its own process."""
    result = CliRunner().invoke(app, ["skills", *args], env={"PROTOAGENT_HOME": str(home)})
    return Result(result.exit_code, result.stdout, result.stderr)


def _process(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-m", "protoagent", "skills", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def test_list_show_enable_disable_reset_round_trip(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    write_skill(
        repo / ".agents/skills",
        "deploy",
        "name: deploy\ndescription: Deploys.",
        files={
            "agents/openai.yaml": "interface:\n  display_name: Deploy\npolicy:\n  allow_implicit_invocation: false\n",
            "scripts/go.sh": "echo go\n",
        },
    )
    write_skill(repo / ".claude/skills", "bad", "name: bad\ndescription: <b>bold</b>")
    listed = json.loads(_cli(home, "list", "--repo", str(repo), "--json").stdout)
    by_name = {s["name"]: s for s in listed["skills"]}
    assert by_name["deploy"]["implicit"] is False and by_name["deploy"]["availability"] == {
        "work": True,
        "coding": True,
    }
    assert by_name["code-review"]["source"] == "bundled" and by_name["code-review"]["availability"]["work"] is False
    assert {"path", "problem"} <= set(listed["diagnostics"][0]) and not by_name["bad"]["valid"]
    coding = json.loads(_cli(home, "list", "--repo", str(repo), "--mode", "coding", "--json").stdout)
    assert "deploy" in {s["name"] for s in coding["skills"]}

    shown = json.loads(_cli(home, "show", "deploy", "--repo", str(repo), "--json").stdout)
    assert shown["body"].startswith("# Steps") and shown["resources"] == ["scripts/go.sh"]
    assert shown["interface"] == {"display_name": "Deploy"} and shown["policy"]["allow_implicit_invocation"] is False

    skill_file = repo / ".agents/skills/deploy/SKILL.md"
    digest = hashlib.sha256(skill_file.read_bytes()).hexdigest()
    assert _cli(home, "disable", "deploy", "--mode", "work", "--repo", str(repo)).returncode == 0
    after = {s["name"]: s for s in json.loads(_cli(home, "list", "--repo", str(repo), "--json").stdout)["skills"]}
    assert after["deploy"]["availability"] == {"work": False, "coding": True}
    assert _cli(home, "enable", "code-review", "--mode", "work", "--repo", str(repo)).returncode == 0
    work = json.loads(_cli(home, "list", "--repo", str(repo), "--mode", "work", "--json").stdout)
    assert "code-review" in {s["name"] for s in work["skills"]}
    assert _cli(home, "reset", "deploy", "--repo", str(repo)).returncode == 0
    reset = {s["name"]: s for s in json.loads(_cli(home, "list", "--repo", str(repo), "--json").stdout)["skills"]}
    assert reset["deploy"]["availability"] == {"work": True, "coding": True}
    assert hashlib.sha256(skill_file.read_bytes()).hexdigest() == digest


def test_validate_exits_2_when_any_bundle_is_invalid(tmp_path: Path) -> None:
    good = simple(tmp_path / "skills", "good", "Fine.")
    bad = write_skill(tmp_path / "skills", "bad", "name: bad\ndescription: has <Tag>")
    ok = _cli(tmp_path / "home", "validate", str(good), "--json")
    assert ok.returncode == 0 and json.loads(ok.stdout)["valid"] is True
    failed = _cli(tmp_path / "home", "validate", str(tmp_path / "skills"))
    assert failed.returncode == 2 and "INVALID" in failed.stdout and str(bad) in failed.stdout
    assert _cli(tmp_path / "home", "validate", str(tmp_path / "nothing")).returncode == 2


def test_unknown_skill_and_malformed_store_are_one_line_errors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    missing = _process(home, "show", "nope", "--repo", str(tmp_path))
    assert missing.returncode == 2 and missing.stderr.startswith("error: no skill named 'nope'")
    assert "Traceback" not in missing.stderr
    home.mkdir()
    (home / "skill-settings.json").write_text("[]", encoding="utf-8")
    refused = _process(home, "disable", "code-review", "--repo", str(tmp_path))
    assert refused.returncode == 2 and "repair or remove" in refused.stderr and "Traceback" not in refused.stderr
    assert (home / "skill-settings.json").read_text(encoding="utf-8") == "[]"
