"""``validate_paths``: check bundles (or roots of bundles) the way discovery reads them, plus evals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from protoagent.skills.discovery import load_bundle
from protoagent.skills.evals import load_evals
from protoagent.skills.model import Diagnostic, SkillBundle


def validate_paths(paths: Sequence[Path]) -> tuple[list[SkillBundle], list[Diagnostic]]:
    """Every bundle under ``paths`` (a bundle folder or a folder of bundles), with its eval
    problems added; and problems with the paths themselves."""
    bundles: list[SkillBundle] = []
    problems: list[Diagnostic] = []
    for path in paths:
        folders = (
            [path]
            if (path / "SKILL.md").is_file()
            else sorted(p for p in path.iterdir() if p.is_dir() and (p / "SKILL.md").is_file())
            if path.is_dir()
            else []
        )
        if not folders:
            problems.append(Diagnostic(str(path), "no SKILL.md here or in its subfolders", "error"))
        for folder in folders:
            bundle = load_bundle(folder, folder.parent, "project", linked=folder.is_symlink())
            _, eval_problems = load_evals(folder)
            bundles.append(replace(bundle, diagnostics=(*bundle.diagnostics, *eval_problems)))
    return bundles, problems
