"""The administrator skills root sits between the user root and the bundled skills, and its
bundles stay byte-for-byte read-only while their runtime preferences stay editable."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.errors import ConfigError
from protoagent.skills.discovery import load_skills
from protoagent.skills.editing import delete_skill, update_skill_file

from .support import simple


def _skills(home: Path, admin: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home), "PROTOAGENT_ADMIN_SKILLS": str(admin)}
    return subprocess.run(
        [sys.executable, "-m", "protoagent", "skills", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


def _listed(home: Path, admin: Path | str, repo: Path, *args: str) -> dict[str, dict[str, object]]:
    result = _skills(home, admin, "list", "--repo", str(repo), "--json", *args)
    assert result.returncode == 0, result.stderr
    return {s["name"]: s for s in json.loads(result.stdout)["skills"]}


def test_discovery_puts_administrator_bundles_between_user_and_bundled_roots(tmp_path: Path) -> None:
    repo, home, admin = tmp_path / "repo", tmp_path / "home", tmp_path / "admin"
    repo.mkdir()
    simple(admin, "house-style", "Use when a change must follow the house style.")
    simple(admin, "code-review", "The administrator's review workflow.")
    simple(admin, "shared", "The administrator's variant.")
    simple(home / "skills", "shared", "The user's variant.")
    listed = _listed(home, admin, repo)
    assert listed["house-style"]["source"] == "admin" and listed["house-style"]["editable"] is False
    assert listed["code-review"]["source"] == "admin"  # over the bundled one
    assert listed["shared"]["source"] == "user"  # under the user's own
    assert listed["house-style"]["availability"] == {"work": True, "coding": True}
    coding = _listed(home, admin, repo, "--mode", "coding")
    assert coding["house-style"]["path"] == str(admin / "house-style" / "SKILL.md")


def test_administrator_bundles_are_read_only_while_their_preferences_stay_editable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, home, admin = tmp_path / "repo", tmp_path / "home", tmp_path / "admin"
    repo.mkdir()
    folder = simple(admin, "house-style", "Use when a change must follow the house style.")
    before = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}
    result = _skills(home, admin, "disable", "house-style", "--mode", "work", "--repo", str(repo))
    assert result.returncode == 0, result.stderr
    assert _listed(home, admin, repo)["house-style"]["availability"] == {"work": False, "coding": True}
    assert "house-style" not in _listed(home, admin, repo, "--mode", "work")
    monkeypatch.setenv("PROTOAGENT_ADMIN_SKILLS", str(admin))
    bundle = next(b for b in load_skills([repo], home).variants if b.name == "house-style")
    with pytest.raises(ConfigError, match="administrator bundle and read-only"):
        update_skill_file(bundle, "---\nname: house-style\ndescription: changed\n---\n")
    with pytest.raises(ConfigError, match="administrator bundle and read-only"):
        delete_skill(bundle)
    assert {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()} == before


def test_an_empty_administrator_root_variable_means_no_administrator_root(tmp_path: Path) -> None:
    repo, home, admin = tmp_path / "repo", tmp_path / "home", tmp_path / "admin"
    repo.mkdir()
    simple(admin, "house-style")
    assert "house-style" in _listed(home, admin, repo)
    assert "house-style" not in _listed(home, "", repo)
