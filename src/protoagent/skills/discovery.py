"""Skill discovery: every root in precedence order, one fault-isolated bundle per folder."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from protoagent.settings import environment
from protoagent.skills.frontmatter import (
    allowed_tools,
    check_description,
    check_metadata,
    check_name,
    parse_skill_text,
)
from protoagent.skills.index import SkillIndex
from protoagent.skills.metadata import read_agent_metadata, read_sidecar
from protoagent.skills.model import MODES, AppMode, Diagnostic, SkillBundle, SourceKind
from protoagent.skills.settings_store import Overlay, apply_record
from protoagent.skills.yaml_cache import YamlCache, parse_yaml
from protoagent.workspace.confined import RefusedRead, is_confined_dir, read_confined

PROJECT_ROOTS = (".agents/skills", ".claude/skills", ".protoagent/skills", ".opencode/skills")
"""Skill folders inside every authorized repository, in precedence order."""
BUNDLED_ROOT = Path(__file__).parent / "bundled"
USER_ROOT = "skills"
"""The user root under the data home (``$PROTOAGENT_HOME/skills``)."""
ADMIN_ROOT = Path("/etc/protoagent/skills")
"""The administrator root: bundles a machine's administrator provides, read-only like bundled ones."""
ADMIN_ROOT_ENV = "PROTOAGENT_ADMIN_SKILLS"
"""Names another administrator root; set to an empty value, there is none."""
READ_ONLY_SOURCES: frozenset[SourceKind] = frozenset({"admin", "bundled"})
"""Sources whose bundles are never changed through settings (their preferences still are)."""
MAX_SKILL_BYTES = 1 << 20
"""A SKILL.md larger than this is not read (its body goes into the prompt whole)."""


def admin_root() -> Path | None:
    """The administrator root: ``$PROTOAGENT_ADMIN_SKILLS`` when set (empty: none), else the default."""
    named = environment().admin_skills
    if named is None:
        return ADMIN_ROOT
    return Path(named).expanduser() if named.strip() else None


def skill_roots(repos: Sequence[Path], home: Path | None, bundled: bool = True) -> list[tuple[Path, SourceKind]]:
    """Every root in precedence order: each repository's four roots, the user root, the
    administrator root, bundled."""
    roots: list[tuple[Path, SourceKind]] = [(Path(r) / sub, "project") for r in repos for sub in PROJECT_ROOTS]
    if home is not None:
        roots.append((home / USER_ROOT, "user"))
    admin = admin_root()
    if admin is not None:
        roots.append((admin, "admin"))
    if bundled:
        roots.append((BUNDLED_ROOT, "bundled"))
    return roots


def discover_skills(
    repos: Sequence[Path] = (),
    home: Path | None = None,
    *,
    overlay: Overlay | None = None,
    bundled: bool = True,
    extra_diagnostics: Iterable[Diagnostic] = (),
    persist_cache: bool = False,
) -> SkillIndex:
    """Discover every bundle variant. A broken bundle becomes an invalid variant with diagnostics;
    it never stops discovery of the others. Discovery writes nothing unless ``persist_cache`` (run
    bootstrap) asks it to keep new YAML parses in the data home's cache file."""
    variants: list[SkillBundle] = []
    diagnostics: list[Diagnostic] = [*extra_diagnostics, *(overlay.diagnostics if overlay else ())]
    seen: dict[str, int] = {}
    cache = YamlCache(home)
    for root, source in skill_roots(repos, home, bundled):
        folders = _bundle_folders(root, skill_fence(root, source), diagnostics)
        root_real = os.path.realpath(root) if folders else ""
        for directory, linked in folders:
            # Only a symlinked folder can resolve elsewhere; the others sit in the resolved root.
            real = os.path.realpath(directory) if linked else os.path.join(root_real, directory.name)
            if real in seen:
                first = variants[seen[real]]
                diagnostics.append(
                    Diagnostic(
                        str(directory),
                        f"collision: same bundle as {str(first.directory)!r} "
                        "through a symlink; discovered once, not editable",
                    )
                )
                variants[seen[real]] = replace(first, editable=False)
                continue
            bundle = load_bundle(directory, root, source, linked=linked, load=cache.load, root_real=root_real)
            if overlay is not None and bundle.identity in overlay.records:
                record = overlay.records[bundle.identity]
                preferences, problems = apply_record(bundle.defaults, record, str(directory))
                bundle = replace(bundle, preferences=preferences, diagnostics=(*bundle.diagnostics, *problems))
            seen[real] = len(variants)
            variants.append(bundle)
    if persist_cache:
        cache.save()
    return SkillIndex(tuple(variants), tuple(diagnostics))


def skill_fence(root: Path, source: SourceKind) -> Path:
    """The folder a root's bundles must resolve inside: the repository for project roots, else the root."""
    return root.parent.parent if source == "project" else root


def _bundle_folders(root: Path, fence: Path, diagnostics: list[Diagnostic]) -> list[tuple[Path, bool]]:
    """Folders holding SKILL.md directly under ``root``, sorted; ``True`` marks a symlinked one.

    A root or a bundle folder that is a symbolic link leading outside ``fence`` is refused with a
    diagnostic and never followed: a repository cannot point discovery at the person's files.
    """
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    if not is_confined_dir(fence, root):
        diagnostics.append(Diagnostic(str(root), f"skills folder leads outside {str(fence)!r}; not followed", "error"))
        return []
    root_linked = root.is_symlink()
    found = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir():
            continue
        if entry.is_symlink() and not is_confined_dir(fence, entry.path):
            problem = f"symbolic link leads outside {str(fence)!r}; not followed"
            diagnostics.append(Diagnostic(entry.path, problem, "error"))
            continue
        if os.path.isfile(os.path.join(entry.path, "SKILL.md")):
            found.append((Path(entry.path), root_linked or entry.is_symlink()))
    return found


def variant_identity(source: SourceKind, root: Path | str, folder: str) -> str:
    """Opaque identity of one variant: project identities include their (resolved) root location."""
    where = "bundled" if source == "bundled" else root if isinstance(root, str) else os.path.realpath(root)
    key = f"{source}\0{where}\0{folder}"
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def load_bundle(
    directory: Path,
    root: Path,
    source: SourceKind,
    *,
    linked: bool = False,
    load: Callable[[str], Any] = parse_yaml,
    root_real: str | None = None,
) -> SkillBundle:
    """Read one bundle; every problem is a diagnostic on the returned variant, never an exception."""
    folder = directory.name
    identity = variant_identity(source, root_real if root_real is not None else root, folder)
    skill_file = directory / "SKILL.md"
    try:
        raw = read_confined(directory, "SKILL.md", limit=MAX_SKILL_BYTES)
        text = raw.decode("utf-8")
    except RefusedRead as exc:
        problem = f"SKILL.md {exc.reason}"
    except (OSError, UnicodeDecodeError) as exc:
        problem = f"SKILL.md cannot be read: {exc.__class__.__name__}; fix its encoding or permissions"
    else:
        problem = ""
    if problem:
        return SkillBundle(
            folder,
            "",
            directory,
            source,
            root,
            identity,
            "",
            "",
            editable=False,
            diagnostics=(Diagnostic(str(skill_file), problem, "error"),),
        )
    parsed = parse_skill_text(text, load)
    name, name_problems = check_name(parsed.meta.get("name"), folder)
    description, description_problems = check_description(parsed.meta.get("description"))
    tools, tool_problems = allowed_tools(parsed.meta.get("allowed-tools"))
    problems = [*parsed.problems, *name_problems, *description_problems, *tool_problems, *check_metadata(parsed.meta)]
    diagnostics = [Diagnostic(str(skill_file), problem, severity) for severity, problem in problems]
    interface, policy, policy_problems = read_agent_metadata(directory, load)
    fallback = frozenset[AppMode](("coding",)) if source == "bundled" else frozenset(MODES)
    defaults, sidecar_problems = read_sidecar(directory, fallback)
    diagnostics.extend([*policy_problems, *sidecar_problems])
    if linked:
        diagnostics.append(Diagnostic(str(directory), "symlinked bundle: readable, not editable through settings"))
    return SkillBundle(
        name=name,
        description=description,
        directory=directory,
        source=source,
        root=root,
        identity=identity,
        body=parsed.body,
        revision=hashlib.sha256(raw).hexdigest()[:16],
        frontmatter=parsed.meta,
        allowed_tools=tools,
        interface=interface,
        policy=policy,
        defaults=defaults,
        preferences=defaults,
        diagnostics=tuple(diagnostics),
        editable=source not in READ_ONLY_SOURCES and not linked,
    )


def load_skills(
    repos: Sequence[Path], home: Path | None, *, bundled: bool = True, persist_cache: bool = False
) -> SkillIndex:
    """Discovery with the user's settings overlay applied (the usual entry point); pure unless
    ``persist_cache`` (run bootstrap only)."""
    from protoagent.skills.settings_store import load_overlay

    return discover_skills(repos, home, overlay=load_overlay(home), bundled=bundled, persist_cache=persist_cache)
