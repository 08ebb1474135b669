"""A task's patch: the session's changes against its base commit as ``git diff`` writes them, and
applying such a patch to another copy.

New files the session created are included (marked intent-to-add first); files git ignores and
the harness's own ``.protoagent`` folder are not. Git runs hardened (``isolation.run_git``) and
with ``--no-ext-diff --no-textconv``, so nothing the repository configures runs; the copy's
``.git/config`` is put back as the clone wrote it before git reads it.
"""

from __future__ import annotations

from pathlib import Path

from protoagent.batch.isolation import run_git

HARNESS_FILES = ":(exclude,top).protoagent"
"""The pathspec keeping the harness's own folder out of a patch."""


def snapshot_config(workspace: Path) -> bytes:
    """The copy's ``.git/config`` as the clone wrote it (taken before the session runs)."""
    return (workspace / ".git" / "config").read_bytes()


def model_patch(workspace: Path, base_commit: str, config: bytes) -> str:
    """The working tree's difference from ``base_commit``; empty when nothing changed."""
    git_config = workspace / ".git" / "config"
    if git_config.is_symlink() or not git_config.is_file() or git_config.read_bytes() != config:
        git_config.unlink(missing_ok=True)
        git_config.write_bytes(config)
    home = workspace.parent
    run_git(["add", "--intent-to-add", "--", ".", HARNESS_FILES], workspace, home)
    diff = ["diff", "--no-color", "--no-ext-diff", "--no-textconv", "--binary", "--no-renames"]
    return run_git([*diff, base_commit, "--", ".", HARNESS_FILES], workspace, home)


def apply_patch(repo: Path, patch: str) -> None:
    """Apply ``patch`` to the working tree of ``repo``; ``ConfigError`` when it does not apply."""
    if patch.strip():
        run_git(["apply", "--whitespace=nowarn", "-"], repo, repo.parent, stdin=patch)
