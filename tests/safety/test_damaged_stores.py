"""Item 8 / T5: damaged stores and settings end in one line naming the file and the fix, exit 2."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from protoagent.api import STORE_FILE
from protoagent.events.sqlite_store import SQLiteStore
from protoagent.events.types import Event
from protoagent.testing import final_turn, make_repo, write_script

from .support import cli

OLD = time.time() - 3600


def _one_line_error(done: object, names: str) -> None:
    result = done  # a CompletedProcess
    out = result.stdout + result.stderr  # type: ignore[attr-defined]
    assert result.returncode == 2, out  # type: ignore[attr-defined]
    assert "Traceback" not in out
    lines = [line for line in out.splitlines() if line.strip()]
    assert len(lines) == 1, out
    assert names in lines[0]


def _run(tmp_path: Path, home: Path, repo: Path | None = None) -> object:
    repo = repo or make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    script = write_script(tmp_path / "turns.jsonl", [final_turn("x is 1", role="architect")])
    return cli(home, "run", "--model", f"scripted:{script}", "--repo", str(repo), "what is x?", timeout=60)


def test_store_that_is_not_a_database_is_one_line_exit_2(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / STORE_FILE).write_bytes(b"this is not a database" * 200)
    _one_line_error(cli(home, "sessions", "list"), STORE_FILE)
    assert (home / STORE_FILE).read_bytes().startswith(b"this is not a database")


def test_zero_byte_store_is_not_silently_recreated(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    store = home / STORE_FILE
    store.write_bytes(b"")
    os.utime(store, (OLD, OLD))
    _one_line_error(cli(home, "sessions", "list"), "0 bytes")
    assert store.stat().st_size == 0


def test_protoagent_home_pointing_at_a_file_is_one_line_exit_2(tmp_path: Path) -> None:
    home = tmp_path / "home-file"
    home.write_text("not a folder")
    _one_line_error(cli(home, "sessions", "list"), "not a folder")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"{not json", "settings.json"),
        (b"\xff\xfe\x00garbage", "settings.json"),
        (b"[" * 100_000, "nested too deeply"),
    ],
    ids=["malformed", "not_utf8", "deep"],
)
def test_damaged_settings_json_is_one_line_exit_2(tmp_path: Path, content: bytes, words: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "settings.json").write_bytes(content)
    _one_line_error(_run(tmp_path, home), words)


def test_fifo_settings_and_project_json_do_not_hang(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    os.mkfifo(home / "settings.json")
    _one_line_error(_run(tmp_path, home), "settings.json")
    repo = make_repo(tmp_path / "repo2", {"a.py": "x = 1\n"})
    (repo / ".protoagent").mkdir()
    os.mkfifo(repo / ".protoagent" / "project.json")
    (home / "settings.json").unlink()
    _one_line_error(_run(tmp_path, home, repo), "project.json")


def test_deeply_nested_project_json_is_one_line_exit_2(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    (repo / ".protoagent").mkdir()
    (repo / ".protoagent" / "project.json").write_text('{"checks": ' + "[" * 100_000)
    _one_line_error(_run(tmp_path, tmp_path / "home", repo), "project.json")


def test_one_bad_page_skips_only_the_sessions_it_holds(tmp_path: Path) -> None:
    home = tmp_path / "home"
    path = home / STORE_FILE
    with SQLiteStore(path) as store:
        for index in range(45):
            session_id = f"s_{index:02d}"
            for seq in range(1, 4):
                payload = {"title": f"t{index}", "blob": f"MARK{index:02d}-{seq}-" + "x" * 900}
                store.append(Event(seq=seq, session_id=session_id, time=time.time(), type="note", payload=payload))
    data = bytearray(path.read_bytes())
    at = data.find(b"MARK20-2-")
    page = 4096
    start = at - at % page
    data[start : start + page] = b"\xff" * page
    path.write_bytes(bytes(data))
    done = cli(home, "sessions", "list", "--json")
    assert done.returncode == 0, done.stderr
    listed = [row["session_id"] for row in json.loads(done.stdout)]
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    print(f"T5 bad page: {len(listed)} of 45 sessions listed, {len(warnings)} skipped with a warning")
    assert "s_20" not in listed and any("s_20" in w for w in warnings)
    assert len(listed) + len(warnings) == 45 and len(listed) >= 40
    assert "Traceback" not in done.stderr
