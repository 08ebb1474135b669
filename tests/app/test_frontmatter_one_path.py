"""One frontmatter path: a skill and an agent file written with the same editor quirks (a
byte-order mark, spaces after a fence) are read the same way, and a file whose fences are
missing or unclosed is refused by both."""

from __future__ import annotations

from pathlib import Path

import pytest

from protoagent.agents.definition import split_agent_text
from protoagent.agents.roster import load_catalog
from protoagent.errors import ConfigError
from protoagent.frontmatter import split_frontmatter
from protoagent.skills.discovery import load_skills
from protoagent.skills.frontmatter import parse_skill_text

QUIRKS = "\ufeff---  \nname: {name}\ndescription: {what}\n--- \t\r\n{body}"
"""A byte-order mark before the first fence, spaces after the first, a space, a tab and CRLF after the second."""


def test_a_skill_and_an_agent_file_with_a_bom_and_spaces_after_their_fences_both_load(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    skill = repo / ".protoagent" / "skills" / "tidy-notes" / "SKILL.md"
    agent = repo / ".protoagent" / "agents" / "coding" / "tidier.md"
    for path, name, what, body in (
        (skill, "tidy-notes", "Tidy the notes when asked to tidy them.", "Sort the bullets.\n"),
        (agent, "tidier", "tidies notes", "Tidy what you are given.\n"),
    ):
        path.parent.mkdir(parents=True)
        path.write_bytes(QUIRKS.format(name=name, what=what, body=body).encode("utf-8"))
    home.mkdir()

    bundles = [b for b in load_skills([repo], home, bundled=False).management() if b.name == "tidy-notes"]
    assert [b.description for b in bundles] == ["Tidy the notes when asked to tidy them."]
    catalog = load_catalog(repo, home)
    assert not [p for p in catalog.problems if "tidier" in str(p.path)]
    tidier = catalog.find("tidier", "coding")
    assert (tidier.description, tidier.prompt.strip()) == ("tidies notes", "Tidy what you are given.")


@pytest.mark.parametrize(
    "text",
    ["name: x\n---\nbody\n", "---\nname: x\nbody without a closing fence\n", "\ufeff--- x\nname: x\n---\n"],
)
def test_a_file_without_an_opening_or_a_closing_fence_is_refused_by_skills_and_agents_alike(text: str) -> None:
    assert split_frontmatter(text) is None
    assert parse_skill_text(text).problems[0][0] == "error"
    with pytest.raises(ConfigError, match="'---'"):
        split_agent_text(text, "agent.md")
