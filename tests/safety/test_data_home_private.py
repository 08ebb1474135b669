"""Item 11: the data home is the user's alone: the folder 0700, the store (with its -wal/-shm) and
settings 0600, whether ProtoAgent creates them or finds them readable by others from an older run."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from protoagent.testing import final_turn, make_repo, write_script

from .support import cli

STORE = "sessions.sqlite"


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def _run(tmp_path: Path, home: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    script = write_script(tmp_path / "turns.jsonl", [final_turn("hello", role="architect")])
    done = cli(home, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--json", "hello")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["session_id"]


def _owned(home: Path) -> list[Path]:
    return [home, *(p for p in home.iterdir() if p.name.startswith((STORE, "settings")))]


def _others_can_read(home: Path) -> list[str]:
    return [f"{p.name} {oct(_mode(p))}" for p in _owned(home) if _mode(p) & 0o077]


@pytest.fixture(autouse=True)
def _usual_umask() -> Iterator[None]:
    """The common umask 022, under which files are created readable by everyone unless asked otherwise."""
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_a_new_data_home_its_store_and_settings_are_readable_by_their_user_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _run(tmp_path, home)
    done = cli(home, "agents", "enable", "scout")
    assert done.returncode == 0, done.stderr
    assert (home / STORE).is_file() and (home / "settings.json").is_file()
    assert _others_can_read(home) == []


def test_an_existing_world_readable_data_home_is_tightened_on_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _run(tmp_path, home)
    cli(home, "agents", "enable", "scout")
    for path in _owned(home):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    (tmp_path / "turns.jsonl").unlink()
    (tmp_path / "repo").rename(tmp_path / "old-repo")
    _run(tmp_path, home)
    assert cli(home, "agents", "list").returncode == 0
    assert _others_can_read(home) == []
