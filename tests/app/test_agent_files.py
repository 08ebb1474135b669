"""Agent Markdown files: parsing, validation, namespaces and the round trip of unknown fields."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.app.support import agent_file, snapshot

from protoagent.agents.definition import parse_agent, split_agent_text
from protoagent.agents.roster import load_catalog
from protoagent.errors import ConfigError

REVIEWER = """\
---
name: reviewer
description: reviews a diff for risky changes   # shown to the lead
role: member
x-team-colour: "teal"   # a field ProtoAgent does not know
tools:
  - read_file
x-notes:
  owner: platform
  since: 2025-01-01
---
Look for risky changes first.
"""


def test_unknown_frontmatter_fields_survive_a_round_trip(tmp_path: Path) -> None:
    """R5: load → edit → save keeps unknown fields (and their comments) byte-for-byte."""
    path = tmp_path / "reviewer.md"
    path.write_text(REVIEWER, encoding="utf-8")
    raw = split_agent_text(path.read_text(encoding="utf-8"), str(path))
    assert raw.dump() == REVIEWER  # an unchanged load → save is byte-identical
    edited = raw.dump({"description": "reviews diffs"})
    path.write_text(edited, encoding="utf-8")
    for line in REVIEWER.splitlines():
        if not line.startswith("description:"):
            assert line in edited.splitlines(), line
    assert "description: reviews diffs" in edited
    again = parse_agent(path.read_text(encoding="utf-8"), path, "work", "project")
    assert again.description == "reviews diffs" and again.tools == ("read_file",)
    assert again.prompt == "Look for risky changes first."


@pytest.mark.parametrize(
    ("frontmatter", "problem"),
    [
        ("name: other", "differs from the file name"),
        ("role: boss", "role 'boss' is not one of"),
        ("tools: 3", "must be a list of names"),
        ("mode: coding", "does not match its folder"),
        ("role: lead\nlead: architect", "a lead does not name a lead"),
        ("name: [unclosed", "not valid YAML"),
    ],
)
def test_an_invalid_agent_file_gets_a_one_line_actionable_error(tmp_path: Path, frontmatter: str, problem: str) -> None:
    path = agent_file(tmp_path, "aide.md", frontmatter)
    with pytest.raises(ConfigError) as caught:
        parse_agent(path.read_text(encoding="utf-8"), path, "work", "project")
    message = str(caught.value)
    assert problem in message and "\n" not in message and str(path) in message


def test_a_file_without_frontmatter_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plain.md"
    path.write_text("just a prompt\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="starts with a '---' line"):
        parse_agent(path.read_text(encoding="utf-8"), path, "work", "user")


def test_only_flat_work_agents_and_coding_name_agents_are_exposed(tmp_path: Path) -> None:
    """R3: agents/NAME.md is a Work agent, agents/coding/NAME.md a Coding one; nothing else shows."""
    agents = tmp_path / "repo" / ".protoagent" / "agents"
    agent_file(agents, "editor.md", "description: edits prose")
    agent_file(agents, "coding/reviewer.md", "description: reviews code")
    agent_file(agents, "coding/deep/hidden.md", "description: nested too deep")
    agent_file(agents, "work/also-hidden.md", "description: not a namespace")
    catalog = load_catalog(tmp_path / "repo", tmp_path / "home")
    project = {d.agent_id for d in catalog.definitions if d.source == "project"}
    assert project == {"editor", "coding/reviewer"}
    assert catalog.find("editor").mode == "work"
    assert catalog.find("coding/reviewer").mode == "coding"


def test_agent_crud_validates_with_the_namespace_explicit_mode_and_never_creates_files(tmp_path: Path) -> None:
    """R1: validation takes the mode from the file's namespace (a contradicting ``mode`` is a
    problem) and loading, finding and validating agents create no file or folder."""
    repo, home = tmp_path / "repo", tmp_path / "home"
    agents = repo / ".protoagent" / "agents"
    agent_file(agents, "coding/reviewer.md", "mode: work\ndescription: claims the wrong mode")
    agent_file(agents, "writer-two.md", "mode: work\ndescription: right mode")
    before = snapshot(tmp_path)
    catalog = load_catalog(repo, home)
    assert [str(p.path.name) for p in catalog.problems] == ["reviewer.md"]
    assert "does not match its folder (coding)" in str(catalog.problems[0])
    assert catalog.find("writer-two").mode == "work"
    with pytest.raises(ConfigError, match="unknown agent 'reviewer'"):
        catalog.find("coding/reviewer")
    assert snapshot(tmp_path) == before
    assert not home.exists()


def test_a_user_file_overrides_a_builtin_and_a_project_file_overrides_the_user(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    agent_file(home / "agents", "coding/coder.md", "model: openai:gpt-user", "User coder note.")
    catalog = load_catalog(repo, home)
    assert catalog.find("coding/coder").source == "user"
    agent_file(repo / ".protoagent" / "agents", "coding/coder.md", "description: project coder\nmodel: openai:gpt-p")
    coder = load_catalog(repo, home).find("coding/coder")
    assert (coder.source, coder.description) == ("project", "project coder")
    # The repository's model is untrusted: the person's own file still chooses the model.
    assert coder.model == "openai:gpt-user" and "model 'openai:gpt-p' ignored" in coder.ignored[0]


def test_a_builtin_lead_cannot_be_turned_into_a_member_by_a_file(tmp_path: Path) -> None:
    agents = tmp_path / ".protoagent" / "agents"
    agent_file(agents, "coding/architect.md", "role: member")
    catalog = load_catalog(tmp_path, None)
    assert "built-in lead" in str(catalog.problems[0])
    assert catalog.find("coding/architect").source == "builtin"


def test_a_member_naming_a_missing_lead_is_left_out_with_a_diagnostic(tmp_path: Path) -> None:
    agents = tmp_path / ".protoagent" / "agents"
    agent_file(agents, "coding/aide.md", "lead: nobody")
    catalog = load_catalog(tmp_path, None)
    assert "lead 'nobody' is not a coding lead" in str(catalog.problems[0])
    assert all(d.name != "aide" for d in catalog.definitions)
