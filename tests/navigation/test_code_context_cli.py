"""The code-context command and the code_context tool as a user and a model reach them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from protoagent.testing import final_turn, tool_turn, write_script

from .support import shop_repo

EXE = [sys.executable, "-m", "protoagent"]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    return subprocess.run([*EXE, *args], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_json_output_has_results_with_repository_relative_paths_and_notes(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    done = cli(tmp_path / "home", "code-context", "callers", "price", "--repo", str(root), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert [(r["path"], r["line"], r["symbol"], r["kind"]) for r in out["results"]] == [
        ("app.py", 8, "app.checkout", "function"),
        ("shop/client.py", 7, "shop.client.Client.total", "method"),
    ]
    assert all(len(r["revision"]) == 64 for r in out["results"]) and out["notes"] == []
    assert (tmp_path / "home" / "navigation").is_dir()


def test_prose_is_refused_with_candidates_and_a_missing_repository_is_a_usage_error(tmp_path: Path) -> None:
    root = shop_repo(tmp_path)
    prose = cli(tmp_path / "home", "code-context", "definition", "where is price computed", "--repo", str(root))
    assert prose.returncode == 1 and prose.stdout == ""
    assert prose.stderr.startswith("error: symbol 'where is price computed' is prose") and "price" in prose.stderr
    assert "Traceback" not in prose.stderr
    as_json = cli(tmp_path / "home", "code-context", "definition", "prise", "--repo", str(root), "--json")
    assert as_json.returncode == 1 and json.loads(as_json.stdout)["candidates"] == ["price"]
    missing = cli(tmp_path / "home", "code-context", "definition", "price", "--repo", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "not a directory" in missing.stderr


def _events(home: Path, session_id: str) -> list[dict[str, Any]]:
    shown = cli(home, "sessions", "show", session_id, "--json")
    assert shown.returncode == 0, shown.stderr
    events: list[dict[str, Any]] = json.loads(shown.stdout)["events"]
    return events


def test_the_question_surface_calls_code_context_without_approval_and_a_prose_call_is_fed_back(
    tmp_path: Path,
) -> None:
    root = shop_repo(tmp_path)
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("code_context", role="architect", symbol="where is price", operation="definition"),
            tool_turn("code_context", role="architect", symbol="price", operation="callers"),
            final_turn("price is called from app.checkout and Client.total.", role="architect"),
        ],
    )
    home = tmp_path / "home"
    run = cli(home, "run", "--model", f"scripted:{script}", "--repo", str(root), "--json", "where is price used?")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["surface"] == "question" and report["status"] == "completed"
    events = _events(home, report["session_id"])
    ended = [e["payload"] for e in events if e["type"] == "tool.ended" and e["payload"]["tool"] == "code_context"]
    assert [e["status"] for e in ended] == ["rejected", "ok"]
    assert "not an exact symbol" in ended[0]["output"]
    assert "app.py:8 function app.checkout" in ended[1]["output"]
    assert not [e for e in events if e["type"].startswith("approval.")]
    offered = next(e["payload"] for e in events if e["type"] == "model.requested")["tool_names"]
    assert "code_context" in offered
