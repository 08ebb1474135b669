"""Regression invariants R19–R23 (skill settings and mode isolation) and the overlay store."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.errors import ConfigError, ToolRejected
from protoagent.skills.discovery import BUNDLED_ROOT, discover_skills, load_skills
from protoagent.skills.editing import delete_skill, update_skill_file
from protoagent.skills.runtime import SkillRuntime
from protoagent.skills.settings_store import load_overlay, reset, set_flag, set_mode, settings_path
from protoagent.skills.tool import SkillInput, SkillTool
from protoagent.tools.base import ToolContext
from protoagent.tools.services import RunServices

from .support import simple, write_skill


def _tree_digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _linked_repo(tmp_path: Path) -> Path:
    outside = write_skill(
        tmp_path / "repo/shared",
        "linked",
        "name: linked\ndescription: Linked.",
        files={
            "agents/protoagent.yaml": "policy:\n  allow_implicit_invocation: true\n",
            "agents/openai.yaml": "interface: {}\n",
            ".protoagent.json": '{"modes": ["work", "coding"]}',
        },
    )
    repo = tmp_path / "repo"
    (repo / ".claude/skills").mkdir(parents=True)
    os.symlink(outside, repo / ".claude/skills/linked")
    return repo


def test_R19_symlinked_bundles_cannot_be_updated_or_deleted_through_settings(tmp_path: Path) -> None:
    repo = _linked_repo(tmp_path)
    bundle = discover_skills([repo], None, bundled=False).find("linked", "coding")
    assert bundle is not None
    before = _tree_digest(tmp_path / "repo/shared/linked")
    with pytest.raises(ConfigError, match="symlinked bundle"):
        update_skill_file(bundle, "---\nname: linked\ndescription: changed\n---\n")
    with pytest.raises(ConfigError, match="read-only"):
        delete_skill(bundle)
    assert _tree_digest(tmp_path / "repo/shared/linked") == before
    simple(tmp_path / "own/.agents/skills", "mine", "Mine.")
    own = discover_skills([tmp_path / "own"], None, bundled=False)
    update_skill_file(own.variants[0], "---\nname: mine\ndescription: Edited.\n---\nbody\n")  # editable ones can
    assert "Edited." in (tmp_path / "own/.agents/skills/mine/SKILL.md").read_text()


def test_R20_preference_edits_never_rewrite_bundle_files_including_builtin_and_symlinked(tmp_path: Path) -> None:
    repo, home = _linked_repo(tmp_path), tmp_path / "home"
    write_skill(
        repo / ".agents/skills",
        "local",
        "name: local\ndescription: Local.",
        files={
            "agents/openai.yaml": "policy:\n  allow_implicit_invocation: true\n",
            ".protoagent.json": '{"modes": ["coding"]}',
        },
    )
    folders = [tmp_path / "repo/shared/linked", repo / ".agents/skills/local", BUNDLED_ROOT / "code-review"]
    before = [_tree_digest(f) for f in folders]
    for bundle in load_skills([repo], home).variants:
        set_mode(home, bundle.identity, bundle.name, bundle.preferences, "work", True)
        set_flag(home, bundle.identity, bundle.name, "implicit", False)
        reset(home, bundle.identity)
        set_mode(home, bundle.identity, bundle.name, bundle.preferences, "coding", False)
    assert [_tree_digest(f) for f in folders] == before
    assert not any(b.available_in("coding") for b in load_skills([repo], home).variants)


def test_R21_same_name_variants_in_two_repositories_have_isolated_preferences_and_reset_by_identity(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    for repo in ("a", "b"):
        simple(tmp_path / repo / ".agents/skills", "lint", f"Lint in {repo}.")
    a = load_skills([tmp_path / "a"], home, bundled=False).variants[0]
    b = load_skills([tmp_path / "b"], home, bundled=False).variants[0]
    assert a.identity != b.identity
    set_mode(home, a.identity, a.name, a.preferences, "coding", False)
    set_mode(home, b.identity, b.name, b.preferences, "work", False)
    assert load_skills([tmp_path / "a"], home, bundled=False).find("lint", "coding") is None
    assert load_skills([tmp_path / "b"], home, bundled=False).find("lint", "coding") is not None
    reset(home, a.identity)
    assert load_skills([tmp_path / "a"], home, bundled=False).find("lint", "coding") is not None
    assert load_skills([tmp_path / "b"], home, bundled=False).find("lint", "work") is None  # b untouched


def test_R22_invalid_higher_precedence_bundle_is_repairable_in_management_but_never_replaces_runtime_fallback(
    tmp_path: Path,
) -> None:
    repo, home = tmp_path / "repo", tmp_path / "home"
    write_skill(repo / ".agents/skills", "code-review", "name: code-review\ndescription: Broken <html> text.")
    index = load_skills([repo], home)
    assert index.find("code-review", "coding").source == "bundled"  # type: ignore[union-attr]
    unscoped = {b.name: b for b in index.management()}
    assert unscoped["code-review"].source == "project" and not unscoped["code-review"].valid
    assert {b.name: b for b in index.management("coding")}["code-review"].source == "bundled"
    work = {b.name: b for b in index.management("work")}
    assert not work["code-review"].valid  # no valid Work implementation: Settings alone shows the invalid one
    assert "code-review" not in {b.name for b in index.runtime("work")}


def test_R23_work_cannot_list_or_load_a_coding_only_bundled_skill_and_vice_versa(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    write_skill(
        repo / ".agents/skills",
        "research",
        "name: research\ndescription: Research the web.",
        files={".protoagent.json": '{"modes": ["work"]}'},
    )
    index = discover_skills([repo], None)
    assert "code-review" not in {b.name for b in index.runtime("work")}
    assert "research" not in {b.name for b in index.runtime("coding")}
    assert "research" in {b.name for b in index.runtime("work")}
    for mode, name in (("work", "code-review"), ("coding", "research")):
        runtime = SkillRuntime(index, mode, (repo,))  # type: ignore[arg-type]
        ctx = ToolContext("s", "c", repo, services=RunServices(skills=runtime))
        with pytest.raises(ToolRejected):
            SkillTool().prepare(SkillInput(name=name), ctx)
    work_runtime = SkillRuntime(index, "work", (repo,))
    ctx = ToolContext("s", "c", repo, services=RunServices(skills=work_runtime))
    tool = SkillTool()
    assert "Do the thing" in asyncio.run(tool.execute(tool.prepare(SkillInput(name="research"), ctx), ctx)).text


def test_store_is_mode_0600_and_a_malformed_store_falls_back_and_refuses_writes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    simple(tmp_path / "repo/.agents/skills", "one", "One.")
    bundle = load_skills([tmp_path / "repo"], home, bundled=False).variants[0]
    set_flag(home, bundle.identity, bundle.name, "implicit", False)
    assert stat.S_IMODE(settings_path(home).stat().st_mode) == 0o600
    assert not load_skills([tmp_path / "repo"], home, bundled=False).variants[0].implicit
    settings_path(home).write_text("{not json", encoding="utf-8")
    index = load_skills([tmp_path / "repo"], home, bundled=False)
    assert index.variants[0].implicit  # bundle defaults
    assert any("refused" in d.problem for d in index.diagnostics)
    with pytest.raises(ConfigError, match="repair or remove"):
        set_flag(home, bundle.identity, bundle.name, "implicit", True)
    assert settings_path(home).read_text(encoding="utf-8") == "{not json"


def test_invalid_record_falls_back_to_bundle_defaults_with_a_diagnostic(tmp_path: Path) -> None:
    home = tmp_path / "home"
    simple(tmp_path / "repo/.agents/skills", "one", "One.")
    bundle = load_skills([tmp_path / "repo"], home, bundled=False).variants[0]
    home.mkdir()
    record = {"modes": ["nowhere"], "implicit": "yes"}
    settings_path(home).write_text(json.dumps({"version": 1, "skills": {bundle.identity: record}}), encoding="utf-8")
    index = load_skills([tmp_path / "repo"], home, bundled=False)
    assert index.variants[0].preferences == bundle.defaults
    assert sum("skill setting" in d.problem for d in index.diagnostics) == 2


WRITER = """
import sys
from pathlib import Path
from protoagent.skills.settings_store import set_flag
home, prefix = Path(sys.argv[1]), sys.argv[2]
for i in range(25):
    set_flag(home, f"{prefix}-{i}", f"skill-{i}", "implicit", False)
"""


def test_store_is_locked_across_processes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(home), p]) for p in ("a", "b", "c")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    assert len(load_overlay(home).records) == 75  # no lost update
