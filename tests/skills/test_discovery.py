"""Discovery over every root in precedence order, collisions, symlinks and agent metadata."""

from __future__ import annotations

import os
from pathlib import Path

from protoagent.skills.discovery import PROJECT_ROOTS, discover_skills

from .support import simple, write_skill


def test_four_project_roots_then_user_then_bundled_in_precedence_order(tmp_path: Path) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    for root in PROJECT_ROOTS:
        simple(repo / root, "shared", f"From {root}.")
    simple(home / "skills", "shared", "From the user root.")
    simple(home / "skills", "code-review", "User override of a bundled skill.")
    index = discover_skills([repo], home)
    shared = index.find("shared", "coding")
    assert shared is not None and shared.description == "From .agents/skills."
    assert [b.source for b in index.variants_named("shared")] == ["project"] * 4 + ["user"]
    review = index.find("code-review", "coding")
    assert review is not None and review.source == "user"
    collisions = [d for d in index.diagnostics if d.problem.startswith("collision")]
    assert len(collisions) == 5  # four shadowed "shared" variants and the shadowed bundled code-review


def test_second_repository_is_searched_after_the_first(tmp_path: Path) -> None:
    simple(tmp_path / "a/.opencode/skills", "tool", "From a.")
    simple(tmp_path / "b/.agents/skills", "tool", "From b.")
    index = discover_skills([tmp_path / "a", tmp_path / "b"], None, bundled=False)
    found = index.find("tool", "work")
    assert found is not None and found.description == "From a."


def test_symlinked_bundle_is_one_bundle_with_a_collision_and_not_editable(tmp_path: Path) -> None:
    real = simple(tmp_path / ".agents/skills", "linked", "Linked skill.")
    (tmp_path / ".claude/skills").mkdir(parents=True)
    os.symlink(real, tmp_path / ".claude/skills/linked")
    index = discover_skills([tmp_path], None, bundled=False)
    assert len(index.variants) == 1
    assert not index.variants[0].editable
    assert any("collision" in d.problem and "symlink" in d.problem for d in index.diagnostics)


def test_symlinked_bundle_inside_the_repository_is_readable_not_editable(tmp_path: Path) -> None:
    shared = simple(tmp_path / "repo/shared", "external", "Shared skill.")
    (tmp_path / "repo/.agents/skills").mkdir(parents=True)
    os.symlink(shared, tmp_path / "repo/.agents/skills/external")
    bundle = discover_skills([tmp_path / "repo"], None, bundled=False).find("external", "coding")
    assert bundle is not None and not bundle.editable and "Do the thing." in bundle.body
    assert any("symlinked bundle" in d.problem for d in bundle.diagnostics)


def test_symlinked_bundle_leading_outside_the_repository_is_refused_not_followed(tmp_path: Path) -> None:
    outside = simple(tmp_path / "elsewhere", "external", "External skill.")
    (tmp_path / "repo/.agents/skills").mkdir(parents=True)
    os.symlink(outside, tmp_path / "repo/.agents/skills/external")
    index = discover_skills([tmp_path / "repo"], None, bundled=False)
    assert index.find("external", "coding") is None and index.variants == ()
    assert any("leads outside" in d.problem and d.path.endswith("external") for d in index.diagnostics)


def test_openai_yaml_policy_makes_a_skill_manual_only(tmp_path: Path) -> None:
    write_skill(
        tmp_path / ".agents/skills",
        "deploy",
        "name: deploy\ndescription: Deploys.",
        files={
            "agents/openai.yaml": "interface:\n  display_name: Deploy\npolicy:\n  allow_implicit_invocation: false\n"
        },
    )
    index = discover_skills([tmp_path], None, bundled=False)
    bundle = index.find("deploy", "coding")
    assert bundle is not None and bundle.interface == {"display_name": "Deploy"}
    assert not bundle.implicit and index.implicit("coding") == ()


def test_native_agent_yaml_wins_over_the_openai_fallback(tmp_path: Path) -> None:
    write_skill(
        tmp_path / ".agents/skills",
        "both",
        "name: both\ndescription: Both.",
        files={
            "agents/openai.yaml": "policy:\n  allow_implicit_invocation: false\n",
            "agents/protoagent.yaml": "interface:\n  display_name: Native\ndependencies:\n  tools: [read_file]\n",
        },
    )
    bundle = discover_skills([tmp_path], None, bundled=False).find("both", "coding")
    assert bundle is not None and bundle.implicit and bundle.interface["display_name"] == "Native"
    assert bundle.policy.tool_dependencies == ("read_file",)


def test_policy_errors_are_diagnostics_and_defaults_apply(tmp_path: Path) -> None:
    write_skill(
        tmp_path / ".agents/skills",
        "odd",
        "name: odd\ndescription: Odd.",
        files={"agents/openai.yaml": "policy:\n  allow_implicit_invocation: sometimes\n"},
    )
    index = discover_skills([tmp_path], None, bundled=False)
    bundle = index.find("odd", "coding")
    assert bundle is not None and bundle.implicit
    assert any("allow_implicit_invocation must be true or false" in d.problem for d in index.diagnostics)


def test_bundled_skills_ship_in_the_package_as_valid_coding_skills() -> None:
    index = discover_skills((), None)
    names = {b.name for b in index.runtime("coding")}
    assert {"debug-failing-test", "code-review", "regression-test"} <= names
    assert all(b.source == "bundled" and not b.editable for b in index.variants)


def test_parse_cache_file_gives_the_same_bundles_and_discovery_never_creates_the_home(tmp_path: Path) -> None:
    from protoagent.skills import yaml_cache

    repo, home = tmp_path / "repo", tmp_path / "home"
    write_skill(repo / ".agents/skills", "cached", "name: cached\ndescription: >-\n  Folded\n  text.\ntriggers: [a]")
    discover_skills([repo], home, bundled=False)
    assert not home.exists()
    home.mkdir()
    first = discover_skills([repo], home, bundled=False, persist_cache=True).variants[0]  # a run bootstrap
    assert (home / yaml_cache.CACHE_FILE).is_file()
    yaml_cache._MEMO.clear()  # a new process: parses come from the cache file
    second = discover_skills([repo], home, bundled=False).variants[0]
    assert (second.description, second.frontmatter) == (first.description, first.frontmatter)
    (home / yaml_cache.CACHE_FILE).write_text("{broken", encoding="utf-8")
    yaml_cache._MEMO.clear()
    assert discover_skills([repo], home, bundled=False).variants[0].frontmatter == first.frontmatter
