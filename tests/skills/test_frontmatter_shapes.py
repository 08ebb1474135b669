"""Real-world SKILL.md shapes, parsed with a YAML library and checked against the reference limits."""

from __future__ import annotations

from pathlib import Path

from protoagent.skills.discovery import discover_skills

from .support import write_skill


def _only(repo: Path):  # type: ignore[no-untyped-def]
    index = discover_skills([repo], None, bundled=False)
    assert len(index.variants) == 1
    return index.variants[0]


def test_description_as_multiline_plain_scalar(tmp_path: Path) -> None:
    write_skill(
        tmp_path / ".agents/skills",
        "pdf-tools",
        "name: pdf-tools\ndescription:\n  Extract text from PDF\n  files and fill forms.",
    )
    bundle = _only(tmp_path)
    assert bundle.valid and bundle.description == "Extract text from PDF files and fill forms."


def test_block_scalar_over_the_limit_is_invalid(tmp_path: Path) -> None:
    long = "\n".join("  " + "word " * 20 for _ in range(12))
    write_skill(tmp_path / ".agents/skills", "big", f"name: big\ndescription: |-\n{long}")
    bundle = _only(tmp_path)
    assert not bundle.valid
    assert any("limit is 1024" in d.problem for d in bundle.diagnostics)


def test_folded_scalar_and_quoted_name(tmp_path: Path) -> None:
    write_skill(tmp_path / ".claude/skills", "review", 'name: "review"\ndescription: >\n  Review code\n  changes.')
    bundle = _only(tmp_path)
    assert bundle.valid and bundle.name == "review" and bundle.description == "Review code changes."


def test_name_differs_from_folder_is_a_diagnostic(tmp_path: Path) -> None:
    write_skill(tmp_path / ".agents/skills", "folder-name", "name: other-name\ndescription: Does things.")
    bundle = _only(tmp_path)
    assert bundle.valid and bundle.name == "other-name"
    assert any("differs from its folder" in d.problem for d in bundle.diagnostics)


def test_angle_brackets_in_description_are_invalid(tmp_path: Path) -> None:
    write_skill(tmp_path / ".agents/skills", "tagged", "name: tagged\ndescription: Use with <Tag> elements.")
    bundle = _only(tmp_path)
    assert not bundle.valid and any("'<' or '>'" in d.problem for d in bundle.diagnostics)


def test_missing_name_takes_the_folder_name(tmp_path: Path) -> None:
    write_skill(tmp_path / ".agents/skills", "nameless", "description: Has no name.")
    bundle = _only(tmp_path)
    assert bundle.valid and bundle.name == "nameless"
    assert any("no 'name'" in d.problem for d in bundle.diagnostics)


def test_unknown_keys_metadata_and_allowed_tools_shapes_are_kept(tmp_path: Path) -> None:
    write_skill(
        tmp_path / ".agents/skills",
        "keys",
        "name: keys\ndescription: Keys.\ntriggers:\n  - on push\nmetadata:\n  author: someone\n  version: '1.2'\n"
        "allowed-tools: Read, Grep Bash\nlicense: MIT",
    )
    bundle = _only(tmp_path)
    assert bundle.frontmatter["triggers"] == ["on push"]
    assert bundle.frontmatter["metadata"] == {"author": "someone", "version": "1.2"}
    assert bundle.allowed_tools == ("Read", "Grep", "Bash")
    write_skill(tmp_path / "b/.agents/skills", "keys", "name: keys\ndescription: K.\nallowed-tools: [read_file, shell]")
    assert _only(tmp_path / "b").allowed_tools == ("read_file", "shell")


def test_legacy_name_is_normalised_with_a_diagnostic(tmp_path: Path) -> None:
    write_skill(tmp_path / ".agents/skills", "my-skill", "name: My_Skill\ndescription: Legacy.")
    bundle = _only(tmp_path)
    assert bundle.valid and bundle.name == "my-skill"
    assert any("legacy name" in d.problem for d in bundle.diagnostics)


def test_broken_yaml_and_binary_files_are_fault_isolated(tmp_path: Path) -> None:
    skills = tmp_path / ".agents/skills"
    write_skill(skills, "broken", "name: broken\ndescription: [unclosed")
    (skills / "binary").mkdir()
    (skills / "binary/SKILL.md").write_bytes(b"\xff\xfe\x00bad")
    write_skill(skills, "fine", "name: fine\ndescription: Works.")
    index = discover_skills([tmp_path], None, bundled=False)
    assert [b.name for b in index.runtime("coding")] == ["fine"]
    invalid = {b.name for b in index.variants if not b.valid}
    assert invalid == {"broken", "binary"}
    assert any("not valid YAML" in d.problem for d in index.diagnostics)
