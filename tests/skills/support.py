"""Write skill bundles the way users have them on disk."""

from __future__ import annotations

from pathlib import Path


def write_skill(
    root: Path,
    folder: str,
    frontmatter: str,
    body: str = "# Steps\n\nDo the thing.\n",
    files: dict[str, str] | None = None,
) -> Path:
    directory = root / folder
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(f"---\n{frontmatter.strip()}\n---\n{body}", encoding="utf-8")
    for relative, text in (files or {}).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return directory


def simple(root: Path, name: str, description: str = "Use when testing things.", **kwargs: object) -> Path:
    return write_skill(root, name, f"name: {name}\ndescription: {description}", **kwargs)  # type: ignore[arg-type]
