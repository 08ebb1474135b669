"""Multi-repository Coding sessions: every root is confined, persisted at creation, listed with its
AGENTS.md chain once, and a resume cannot change the set of repositories."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from tests.app.support import call, cli, say, scripted_run

from protoagent.api import open_store
from protoagent.errors import ConfigError, ToolRejected
from protoagent.events import Event
from protoagent.testing import make_repo, write_script
from protoagent.workspace.paths import locate

ALPHA_RULE = "Alpha rule: keep the API stable."
BETA_RULE = "Beta rule: every constant is upper case."


def _repos(tmp_path: Path) -> tuple[Path, Path]:
    alpha = make_repo(tmp_path / "alpha", {"AGENTS.md": f"{ALPHA_RULE}\n", "a.py": "A_VALUE = 1\n"})
    beta = make_repo(
        tmp_path / "beta",
        {
            "AGENTS.md": f"{BETA_RULE}\n",
            "b.py": "B_VALUE = 2\n",
            "pkg/AGENTS.md": "Pkg rule: no I/O.\n",
            "pkg/mod.py": "M = 1\n",
        },
    )
    (tmp_path / "outside.py").write_text("SECRET = 3\n")
    os.symlink("../outside.py", beta / "escape.py")
    return alpha, beta


def _events(home: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's log as the CLI recorded it, read from the store."""
    with open_store(home) as store:
        return [e.model_dump() for e in store.load(session_id)]


def _ended(events: list[Event], tool: str) -> list[Event]:
    return [e for e in events if e.type == "tool.ended" and e.payload["tool"] == tool]


def test_a_relative_path_is_under_the_primary_root_and_an_absolute_one_under_its_deepest_root(
    tmp_path: Path,
) -> None:
    alpha, beta = _repos(tmp_path)
    nested = alpha / "vendor"
    nested.mkdir()
    assert locate(alpha, "a.py", [beta]).shown == "a.py"
    placed = locate(alpha, str(beta / "pkg" / "x.py"), [beta])
    assert (placed.root, placed.rel, placed.shown) == (beta, "pkg/x.py", str(beta / "pkg" / "x.py"))
    assert locate(alpha, str(nested / "v.py"), [beta, nested]).root == nested
    assert locate(alpha, str(alpha / "a.py"), [beta]).shown == "a.py"
    for escape in (str(tmp_path / "outside.py"), str(beta / ".." / "outside.py"), "../beta/b.py"):
        with pytest.raises(ToolRejected) as refused:
            locate(alpha, escape, [beta])
        assert refused.value.kind == "path_outside_workspace"


def test_tools_reach_every_root_of_the_session_and_nothing_outside_them(tmp_path: Path) -> None:
    (alpha, beta), home = _repos(tmp_path), tmp_path / "home"
    turns = [
        call("read_file", "architect", path="a.py"),
        call("read_file", "architect", path=str(beta / "b.py")),
        call("search_regex", "architect", pattern="B_VALUE", path=str(beta)),
        call("read_file", "architect", path=str(beta / "escape.py")),
        call("read_file", "architect", path=str(tmp_path / "outside.py")),
        call("coder", "architect", task="add NEW = 4 to beta as new.py"),
        call("create_file", "coder", path=str(beta / "new.py"), content="NEW = 4\n"),
        say("created beta/new.py", "coder"),
        say("Both repositories read; beta has new.py.", "architect"),
    ]
    report, events, _, _ = scripted_run(
        "read both repositories", turns, repo=alpha, home=home, surface="editing", extra_repos=(beta,)
    )
    reads = _ended(events, "read_file")
    assert [r.payload["status"] for r in reads] == ["ok", "ok", "rejected", "rejected"]
    assert "B_VALUE = 2" in reads[1].payload["output"] and reads[1].payload["data"]["path"] == str(beta / "b.py")
    assert all(r.payload["data"]["kind"] == "path_outside_workspace" for r in reads[2:])
    assert "SECRET" not in json.dumps([r.payload for r in reads])
    found = _ended(events, "search_regex")[0].payload["data"]["matches"]
    assert found == [{"path": str(beta / "b.py"), "line": 1, "text": "B_VALUE = 2"}]
    assert (beta / "new.py").read_text() == "NEW = 4\n" and not (alpha / "new.py").exists()
    assert str(beta / "new.py") in report.evidence.changed_files and report.evidence.applied
    assert events[0].payload["roots"] == [str(alpha), str(beta)]


def test_multi_repo_system_prompts_list_every_root_and_its_instructions_once_per_session(tmp_path: Path) -> None:
    """R6 in a run: each root's AGENTS.md is in every request exactly once, nested ones once touched."""
    (alpha, beta), home = _repos(tmp_path), tmp_path / "home"
    turns = [
        call("read_file", "architect", path=str(beta / "b.py")),
        call("read_file", "architect", path=str(beta / "pkg" / "mod.py")),
        say("Read.", "architect"),
    ]
    _, _, model, _ = scripted_run(
        "what is in beta?", turns, repo=alpha, home=home, surface="question", extra_repos=(beta,)
    )
    assert len(model.requests) == 3
    for request in model.requests:
        assert request.system.count(ALPHA_RULE) == 1 and request.system.count(BETA_RULE) == 1
        assert request.system.count(f"- {alpha}") == 1 and request.system.count(f"- {beta}") == 1
    assert "Pkg rule" in model.requests[-1].system and "Pkg rule" not in model.requests[0].system


def test_work_mode_refuses_further_repositories(tmp_path: Path) -> None:
    (alpha, beta), home = _repos(tmp_path), tmp_path / "home"
    with pytest.raises(ConfigError, match="Work mode uses its own session workspace"):
        scripted_run("hello", [say("hi", "assistant")], repo=alpha, home=home, mode="work", extra_repos=(beta,))
    assert not (home / "workspaces").exists()


@pytest.mark.slow
def test_a_multi_repo_session_resumes_only_over_the_same_repositories(tmp_path: Path) -> None:
    (alpha, beta), home = _repos(tmp_path), tmp_path / "home"
    other = make_repo(tmp_path / "gamma", {"c.py": "C = 1\n"})
    script = write_script(tmp_path / "q.jsonl", [say("two repositories", "architect")])
    made = cli(home, "run", "--repo", str(alpha), "--repo", str(beta), "--model", f"scripted:{script}", "--json", "hi")
    assert made.returncode == 0, made.stderr
    session_id = json.loads(made.stdout)["session_id"]
    shown = json.loads(cli(home, "sessions", "show", session_id, "--json").stdout)
    assert shown["roots"] == [str(alpha), str(beta)] and shown["root"] == str(alpha)
    events_before = _events(home, session_id)
    for repos in ([alpha], [alpha, other], [beta, alpha, other]):
        flags = [arg for repo in repos for arg in ("--repo", str(repo))]
        refused = cli(home, "run", "--resume", session_id, *flags, "--model", f"scripted:{script}", "next")
        assert refused.returncode == 2, refused.stderr
        assert "cannot" in refused.stderr and refused.stderr.strip().count("\n") == 0
    assert _events(home, session_id) == events_before
    more = write_script(
        tmp_path / "more.jsonl", [call("read_file", "architect", path=str(beta / "b.py")), say("B is 2", "architect")]
    )
    flags = ["--repo", str(alpha), "--repo", str(beta)]
    for resume_flags in ([], flags):
        again = cli(home, "run", "--resume", session_id, *resume_flags, "--model", f"scripted:{more}", "--json", "b?")
        assert again.returncode == 0, again.stderr  # each run reads the script afresh
    final = _events(home, session_id)
    reads = [e for e in final if e["type"] == "tool.ended" and e["payload"]["tool"] == "read_file"]
    assert len(reads) == 2 and all(r["payload"]["status"] == "ok" for r in reads)
