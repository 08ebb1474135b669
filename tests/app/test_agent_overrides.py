"""Overrides layer over the code-owned profile (a field a file leaves out keeps the profile's
value), and ``agents list`` reports the files it leaves out, as ``skills list`` does."""

from __future__ import annotations

import json
from pathlib import Path

from tests.app.support import agent_file, cli, say, scripted_run

from protoagent.testing import make_repo

CODER_DESCRIPTION = "applies edits for one focused assignment now"


def test_an_override_that_omits_description_keeps_the_builtin_one(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    agent_file(home / "agents", "coding/coder.md", "tools_opt_out: [replace_file]")
    agent_file(home / "agents", "coding/tester.md", "model: scripted:never.jsonl")
    listed = json.loads(cli(home, "agents", "list", "--repo", str(repo), "--json").stdout)["agents"]
    by_id = {row["id"]: row for row in listed}
    assert by_id["coding/coder"]["description"] == CODER_DESCRIPTION
    assert by_id["coding/coder"]["source"] == "user"
    assert by_id["coding/tester"]["description"] == "read-only: proposes regression cases and check ids"
    shown = json.loads(cli(home, "agents", "show", "coding/coder", "--repo", str(repo), "--json").stdout)
    assert shown["description"] == CODER_DESCRIPTION and "replace_file" not in shown["tools"]
    # The small-profile routing card the Architect reads carries the same description.
    turns = [say("nothing to do", "architect")]
    scripted = scripted_run(
        "look at notes.py", turns, repo=repo, home=home, surface="editing", profile="small", tester=False
    )
    system = next(r for r in scripted[2].requests if r.agent_role == "architect").system
    assert f"coder(task): {CODER_DESCRIPTION}" in system and "coder(task): coder" not in system


def test_agents_list_reports_a_broken_file_beside_the_rest(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    agents = repo / ".protoagent" / "agents" / "coding"
    agent_file(agents, "reviewer.md", "description: reviews a change")
    broken = agents / "broken.md"
    broken.write_text("---\ndescription: [unclosed\n---\nbody\n", encoding="utf-8")
    done = cli(home, "agents", "list", "--repo", str(repo), "--json")
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    ids = {row["id"] for row in listing["agents"]}
    assert "coding/reviewer" in ids and "coding/broken" not in ids
    errors = [d for d in listing["diagnostics"] if d["severity"] == "error"]
    assert [d["path"] for d in errors] == [str(broken)]
    assert "not valid YAML" in errors[0]["problem"]
    text = cli(home, "agents", "list", "--repo", str(repo))
    assert "coding/reviewer" in text.stdout and f"error: {broken}" in text.stderr
