"""Materialisation happens only at bootstrap: read routes create or change no file."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.app.support import agent_file, cli, say, snapshot

from protoagent.agents.modes import session_facts
from protoagent.api import open_store
from protoagent.testing import make_repo, write_script


@pytest.mark.slow
def test_get_routes_do_not_mutate_configuration(tmp_path: Path) -> None:
    """R2: agents list/show/validate and session loads leave every file as it was."""
    home = tmp_path / "home"
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    agent_file(repo / ".protoagent" / "agents", "coding/reviewer.md", "description: reviews\nx-extra: kept")
    agent_file(repo / ".protoagent" / "agents", "coding/broken.md", "role: boss")
    agent_file(home / "agents", "editor.md", "role: lead\ndescription: edits")
    script = write_script(tmp_path / "turns.jsonl", [say("A is 1.", "architect")])
    made = cli(home, "run", "--repo", str(repo), "--model", f"scripted:{script}", "--json", "what is A?")
    assert made.returncode == 0, made.stderr
    session_id = made.stdout.split('"session_id": "')[1].split('"')[0]
    before = snapshot(home, repo)
    reads = [
        ("agents", "list", "--repo", str(repo), "--json"),
        ("agents", "list", "--mode", "work"),
        ("agents", "show", "reviewer", "--repo", str(repo), "--json"),
        ("agents", "show", "editor"),
        ("agents", "validate", "--repo", str(repo)),
        ("sessions", "show", session_id, "--json"),
        ("sessions", "list", "--json"),
    ]
    for args in reads:
        result = cli(home, *args, cwd=repo)
        assert result.returncode in (0, 2), (args, result.stderr)
    with open_store(home) as store:
        assert session_facts(session_id, store.load(session_id)).mode == "coding"
    assert snapshot(home, repo) == before


def test_read_routes_on_a_fresh_machine_create_no_data_home(tmp_path: Path) -> None:
    home = tmp_path / "never-created"
    for args in (("agents", "list"), ("agents", "show", "architect"), ("agents", "validate")):
        assert cli(home, *args, cwd=tmp_path).returncode == 0
    assert not home.exists()


@pytest.mark.slow
def test_validate_lists_each_invalid_file_and_the_runtime_leaves_it_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    repo = make_repo(tmp_path / "repo", {"a.py": "A = 1\n"})
    bad = agent_file(repo / ".protoagent" / "agents", "coding/broken.md", "role: boss")
    agent_file(repo / ".protoagent" / "agents", "coding/fine.md", "description: fine")
    result = cli(home, "agents", "validate", "--repo", str(repo))
    assert result.returncode == 2
    assert result.stderr.strip() == f"{bad}: role 'boss' is not one of: lead, member"
    listed = cli(home, "agents", "list", "--repo", str(repo))
    assert "coding/fine" in listed.stdout and "broken" not in listed.stdout
    agent_file(repo / ".protoagent" / "agents", "coding/broken.md", "description: repaired")
    assert cli(home, "agents", "validate", "--repo", str(repo)).returncode == 0
