"""Preference commands change the variant they say: with ``--mode``, the one that mode's runtime
uses (an invalid higher-precedence bundle never takes the change meant for its valid fallback);
without it, the management projection's winner. The output names the variant either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from protoagent.skills.discovery import load_skills

from .support import simple, write_skill


def _skills(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home), "PROTOAGENT_ADMIN_SKILLS": ""}
    return subprocess.run(
        [sys.executable, "-m", "protoagent", "skills", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def _shadowed(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """An invalid ``deploy`` in .agents/skills over a valid one in .claude/skills."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    invalid = write_skill(repo / ".agents/skills", "deploy", "name: deploy\ndescription: <b>bold</b>")
    valid = simple(repo / ".claude/skills", "deploy", "Use when deploying the service.")
    return repo, home, invalid / "SKILL.md", valid / "SKILL.md"


def _runtime(repo: Path, home: Path, mode: str) -> dict[str, Path]:
    index = load_skills([repo], home, bundled=False)
    return {b.name: b.skill_file for b in index.runtime(mode)}  # type: ignore[arg-type]


def test_a_mode_preference_targets_the_variant_that_modes_runtime_uses_not_an_invalid_winner(
    tmp_path: Path,
) -> None:
    repo, home, invalid, valid = _shadowed(tmp_path)
    assert _runtime(repo, home, "coding")["deploy"] == valid
    result = _skills(home, "disable", "deploy", "--mode", "coding", "--repo", str(repo))
    assert result.returncode == 0, result.stderr
    assert str(valid) in result.stdout
    assert "the variant coding uses" in result.stdout and str(invalid) not in result.stdout
    assert "deploy" not in _runtime(repo, home, "coding")
    assert _runtime(repo, home, "work")["deploy"] == valid
    shown = json.loads(_skills(home, "show", "deploy", "--mode", "work", "--repo", str(repo), "--json").stdout)
    assert shown["path"] == str(valid) and shown["availability"] == {"work": True, "coding": False}

    enabled = _skills(home, "enable", "deploy", "--mode", "coding", "--repo", str(repo))
    assert enabled.returncode == 0 and str(valid) in enabled.stdout
    assert _runtime(repo, home, "coding")["deploy"] == valid


def test_without_a_mode_a_preference_targets_the_management_winner_and_says_so(tmp_path: Path) -> None:
    repo, home, invalid, valid = _shadowed(tmp_path)
    result = _skills(home, "disable", "deploy", "--repo", str(repo))
    assert result.returncode == 0, result.stderr
    assert f"{invalid}, invalid; the precedence winner" in result.stdout
    # The valid fallback the runtime uses is untouched in both modes.
    assert _runtime(repo, home, "coding")["deploy"] == valid and _runtime(repo, home, "work")["deploy"] == valid
    reset = _skills(home, "reset", "deploy", "--mode", "coding", "--repo", str(repo))
    assert reset.returncode == 0 and str(valid) in reset.stdout
