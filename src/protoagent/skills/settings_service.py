"""Skill settings shared by ``protoagent skills`` and the settings API: the management rows, the
variant a change concerns, preference edits keyed by that exact variant, reset, and bundle
content edits (refused for built-in, administrator and symlinked bundles by ``skills.editing``).

Reads are pure. Preference edits write only ``skill-settings.json``, never a bundle file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protoagent.errors import ConfigError
from protoagent.skills.discovery import load_skills
from protoagent.skills.editing import delete_skill, update_skill_file
from protoagent.skills.index import SkillIndex
from protoagent.skills.model import MODES, AppMode, SkillBundle
from protoagent.skills.settings_store import reset, set_flags, set_mode


def skill_entry(bundle: SkillBundle) -> dict[str, Any]:
    """One row of the management projection."""
    return {
        "name": bundle.name,
        "description": bundle.description,
        "source": bundle.source,
        "root": str(bundle.root),
        "path": str(bundle.skill_file),
        "identity": bundle.identity,
        "implicit": bundle.implicit,
        "manual": bundle.preferences.manual,
        "availability": {mode: bundle.available_in(mode) for mode in MODES},
        "preferences": {
            "implicit": bundle.preferences.implicit,
            "manual": bundle.preferences.manual,
            "modes": sorted(bundle.preferences.modes),
        },
        "valid": bundle.valid,
        "editable": bundle.editable and not bundle.directory.is_symlink(),
    }


def skill_listing(index: SkillIndex, mode: AppMode | None) -> dict[str, Any]:
    """``{"skills": rows, "diagnostics": [...]}``: unscoped, the precedence winner per name (an
    invalid one included so it can be repaired); scoped, the mode's effective implementation."""
    return {
        "skills": [skill_entry(b) for b in index.management(mode)],
        "diagnostics": [d.to_json() for d in index.diagnostics],
    }


def skill_detail(bundle: SkillBundle) -> dict[str, Any]:
    """A row plus the bundle's text, frontmatter, policy and own diagnostics."""
    from protoagent.skills.activation import task_resources

    return {
        **skill_entry(bundle),
        "body": bundle.body,
        "resources": list(task_resources(bundle)),
        "interface": bundle.interface,
        "policy": {
            "allow_implicit_invocation": bundle.policy.allow_implicit_invocation,
            "tool_dependencies": list(bundle.policy.tool_dependencies),
        },
        "frontmatter": bundle.frontmatter,
        "diagnostics": [d.to_json() for d in bundle.diagnostics],
    }


def skill_index(repos: Sequence[Path], home: Path | None) -> SkillIndex:
    return load_skills([Path(r).resolve() for r in repos], home)


def target(index: SkillIndex, name: str, mode: AppMode | None = None, identity: str | None = None) -> SkillBundle:
    """The variant a change about ``name`` concerns: exactly ``identity`` when given, else the one
    ``mode``'s runtime uses, else the management winner (``SkillIndex.preference_target``)."""
    if identity is not None:
        found = next((b for b in index.variants_named(name) if b.identity == identity), None)
        if found is None:
            raise ConfigError(f"skill {name!r} has no variant {identity!r}; list the skills for their identities")
        return found
    bundle = index.preference_target(name, mode)
    if bundle is None:
        known = ", ".join(b.name for b in index.management()) or "none"
        raise ConfigError(f"no skill named {name!r}; known skills: {known}")
    return bundle


def fresh(repos: Sequence[Path], home: Path | None, bundle: SkillBundle) -> SkillBundle:
    """The same variant as discovered afresh (its preferences as stored now)."""
    return next((b for b in skill_index(repos, home).variants if b.identity == bundle.identity), bundle)


def set_availability(
    home: Path, repos: Sequence[Path], bundle: SkillBundle, modes: Sequence[AppMode], enabled: bool
) -> SkillBundle:
    """Make this variant available (or not) in each of ``modes``; only the overlay changes."""
    for mode in modes:
        current = fresh(repos, home, bundle).preferences
        set_mode(home, bundle.identity, bundle.name, current, mode, enabled)
    return fresh(repos, home, bundle)


def set_preferences(home: Path, repos: Sequence[Path], bundle: SkillBundle, changes: Mapping[str, Any]) -> SkillBundle:
    """Apply ``{"modes": [...], "implicit": bool, "manual": bool}`` (any subset) to this variant."""
    unknown = sorted(set(changes) - {"modes", "implicit", "manual"})
    if unknown:
        raise ConfigError(f"unknown skill preference {unknown[0]!r}; use modes, implicit or manual")
    if "modes" in changes:
        wanted = changes["modes"]
        if not isinstance(wanted, list) or any(m not in MODES for m in wanted):
            raise ConfigError("skill preference 'modes' is a list of: work, coding")
        for mode in MODES:
            set_availability(home, repos, bundle, [mode], mode in wanted)
    flags = {k: v for k, v in changes.items() if k in ("implicit", "manual")}
    if any(not isinstance(v, bool) for v in flags.values()):
        raise ConfigError("skill preferences 'implicit' and 'manual' are true or false")
    if flags:
        set_flags(home, bundle.identity, bundle.name, flags)
    return fresh(repos, home, bundle)


def reset_preferences(home: Path, repos: Sequence[Path], bundle: SkillBundle) -> SkillBundle:
    """Forget this variant's preferences so the bundle defaults apply again."""
    reset(home, bundle.identity)
    return fresh(repos, home, bundle)


def update_content(bundle: SkillBundle, text: str) -> None:
    """Replace an editable bundle's SKILL.md (built-in, administrator and symlinked ones refuse)."""
    update_skill_file(bundle, text)


def remove_bundle(bundle: SkillBundle) -> None:
    """Delete an editable bundle's folder (built-in, administrator and symlinked ones refuse)."""
    delete_skill(bundle)
