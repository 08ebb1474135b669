"""Bundle content edits through settings: allowed only for editable bundles. Built-in and
symlinked bundles stay byte-for-byte read-only; their runtime preferences remain editable."""

from __future__ import annotations

import shutil

from protoagent.atomic_files import replace_file
from protoagent.errors import ConfigError
from protoagent.skills.model import SkillBundle


def _refuse_unless_editable(bundle: SkillBundle, action: str) -> None:
    if not bundle.editable or bundle.directory.is_symlink():
        kinds = {"bundled": "a built-in bundle", "admin": "an administrator bundle"}
        why = kinds.get(bundle.source, "a symlinked bundle")
        raise ConfigError(
            f"cannot {action} skill {bundle.name!r}: it is {why} and read-only; edit its source "
            "folder directly, or change only its preferences (protoagent skills enable/disable)"
        )


def update_skill_file(bundle: SkillBundle, text: str) -> None:
    """Replace SKILL.md atomically (editable bundles only)."""
    _refuse_unless_editable(bundle, "update")
    replace_file(bundle.skill_file, text, prefix=".SKILL.")


def delete_skill(bundle: SkillBundle) -> None:
    """Remove the bundle folder (editable bundles only)."""
    _refuse_unless_editable(bundle, "delete")
    shutil.rmtree(bundle.directory)
