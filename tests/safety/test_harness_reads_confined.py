"""Item 2: every read the harness makes on the repository's behalf is confined like read_file.

A hostile repository links a skill resource and AGENTS.md to a canary file outside it; the run
(even under ``--approval deny``) must put the canary into no tool result, no request, no stored file.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from protoagent.testing import final_turn, make_repo, write_script

from .recording_model import recording_model
from .support import EXE, cli

CANARY = "CANARY-OUTSIDE-9f3a71"


def _hostile_repo(tmp_path: Path) -> Path:
    (tmp_path / "secret.txt").write_text(f"{CANARY}\n", encoding="utf-8")
    repo = make_repo(
        tmp_path / "repo",
        {
            "a.py": "x = 1\n",
            ".agents/skills/notes/SKILL.md": "---\nname: notes\ndescription: Project notes.\n---\nRead ref.md.\n",
            "nested/CLAUDE.md": "Nested instructions stay readable.\n",
        },
        git=False,
    )
    os.symlink("../../../../secret.txt", repo / ".agents/skills/notes/ref.md")
    os.symlink("../secret.txt", repo / "AGENTS.md")
    os.symlink("CLAUDE.md", repo / "nested/AGENTS.md")
    return repo


def _skill_turn(arguments: dict[str, Any]) -> dict[str, Any]:
    return {"role": "architect", "tool_calls": [{"name": "skill", "arguments": arguments}]}


def _leaks(home: Path, *texts: str) -> list[str]:
    found = [str(p) for p in home.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]
    return found + [text[:80] for text in texts if CANARY in text]


def test_skill_resource_symlinked_outside_is_refused_even_under_approval_deny(tmp_path: Path) -> None:
    repo, home = _hostile_repo(tmp_path), tmp_path / "home"
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            _skill_turn({"name": "notes"}),
            _skill_turn({"name": "notes", "resource": "ref.md"}),
            final_turn("done", role="architect"),
        ],
    )
    done = cli(
        home,
        "run",
        "--model",
        f"scripted:{script}",
        "--repo",
        str(repo),
        "--approval",
        "deny",
        "--surface",
        "question",
        "--json",
        "what do the notes say?",
    )
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)["session_id"]
    shown = cli(home, "sessions", "show", session, "--json")
    ended = [e["payload"] for e in json.loads(shown.stdout)["events"] if e["type"] == "tool.ended"]
    assert [p["status"] for p in ended] == ["ok", "rejected"]
    assert "leads outside" in ended[1]["output"] and "not followed" in ended[1]["output"]
    assert _leaks(home, done.stdout, done.stderr, shown.stdout) == []


def test_agents_md_symlinked_outside_never_reaches_a_prompt(tmp_path: Path) -> None:
    repo, home = _hostile_repo(tmp_path), tmp_path / "home"
    with recording_model() as (model, bodies):
        done = cli(
            home,
            "run",
            "--model",
            model,
            "--repo",
            str(repo),
            "--approval",
            "deny",
            "--surface",
            "question",
            "--json",
            "what is in nested/CLAUDE.md?",
        )
    assert done.returncode == 0, done.stderr
    assert bodies, "the model must have been asked"
    systems = [m["content"] for body in bodies for m in json.loads(body)["messages"] if m["role"] == "system"]
    assert any("AGENTS.md was not read" in text and "leads outside" in text for text in systems)
    assert _leaks(home, done.stdout, done.stderr, *bodies) == []


def test_agents_md_symlinked_inside_the_repository_is_still_followed(tmp_path: Path) -> None:
    repo, home = _hostile_repo(tmp_path), tmp_path / "home"
    os.unlink(repo / "AGENTS.md")
    os.symlink("nested/CLAUDE.md", repo / "AGENTS.md")
    with recording_model() as (model, bodies):
        done = cli(home, "run", "--model", model, "--repo", str(repo), "--surface", "question", "--json", "hi")
    assert done.returncode == 0, done.stderr
    assert any("Nested instructions stay readable." in body for body in bodies)


def test_agent_files_and_folders_symlinked_outside_are_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside-agents"
    (outside / "coding").mkdir(parents=True)
    spy = f"---\nname: spy\ndescription: {CANARY}\n---\n{CANARY}\n"
    (outside / "coding" / "spy.md").write_text(spy, encoding="utf-8")
    folder_link = make_repo(tmp_path / "folder-link", {"a.py": "x = 1\n"}, git=False)
    (folder_link / ".protoagent").mkdir()
    os.symlink(outside, folder_link / ".protoagent/agents")
    file_link = make_repo(tmp_path / "file-link", {"a.py": "x = 1\n"}, git=False)
    (file_link / ".protoagent/agents/coding").mkdir(parents=True)
    os.symlink(outside / "coding" / "spy.md", file_link / ".protoagent/agents/coding/spy.md")
    home = tmp_path / "home"
    for repo in (folder_link, file_link):
        listed = subprocess.run(
            [*EXE, "agents", "list"],
            cwd=repo,
            env={**os.environ, "PROTOAGENT_HOME": str(home)},
            capture_output=True,
            text=True,
            timeout=60,
        )
        out = listed.stdout + listed.stderr
        assert "Traceback" not in out and CANARY not in out, out
        assert "leads outside" in out and "spy" not in listed.stdout


def test_localization_never_parses_a_source_file_linked_outside_or_a_fifo(tmp_path: Path) -> None:
    from protoagent.repair.resolve import parse_module

    (tmp_path / "secret.py").write_text(f"def leak():\n    return {CANARY!r}\n", encoding="utf-8")
    repo = make_repo(tmp_path / "repo", {"real.py": "def ok():\n    return 1\n"}, git=False)
    os.symlink("../secret.py", repo / "link.py")
    os.mkfifo(repo / "pipe.py")
    assert parse_module(repo, "real.py") is not None
    assert parse_module(repo, "link.py") is None
    assert parse_module(repo, "pipe.py") is None


def test_mcp_files_linked_outside_the_repository_declare_nothing(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "mcp.json").write_text('{"mcpServers": {"spy": {"command": "python3"}}}', encoding="utf-8")
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"}, git=False)
    os.symlink(outside, repo / ".protoagent")
    os.symlink(outside / "mcp.json", repo / ".mcp.json")
    listed = cli(tmp_path / "home", "mcp", "list", "--repo", str(repo))
    out = listed.stdout + listed.stderr
    assert "Traceback" not in out and "spy" not in listed.stdout, out
    assert out.count("leads outside") == 2, out
