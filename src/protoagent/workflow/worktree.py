"""``run --worktree``: a Coding session in a new git worktree on a new branch.

The person's checkout is never touched: the worktree is a new folder under the data home
(``worktrees/<repository>-<id>``) on a new branch ``protoagent/<id>`` from ``HEAD``, and the
session's root is that folder, so every write, command and check happens there. At the end the
worktree is kept (the default: its path and branch are printed; merge, commit or remove it as you
like) or removed with its branch (``--worktree-end remove``); the session log keeps the changes
either way (``protoagent diff``). Git runs hardened (``workflow.git_ops``).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from protoagent.errors import ConfigError
from protoagent.workflow.git_ops import GitError, add_worktree, git, remove_worktree, toplevel

WorktreeEnd = Literal["keep", "remove"]
BRANCH_PREFIX = "protoagent/"


@dataclass(frozen=True, slots=True)
class Worktree:
    repo: Path
    """The person's checkout (its work tree's top)."""
    path: Path
    """The new worktree: the session's root."""
    branch: str
    subdir: Path
    """Where in the work tree the session was asked to work (``.`` for the top)."""

    @property
    def root(self) -> Path:
        return self.path / self.subdir


def open_worktree(repo: Path, data_home: Path) -> Worktree:
    """A new worktree of the repository ``repo`` is in (``ConfigError`` when it is not one, or
    has no commit to branch from)."""
    try:
        top = toplevel(repo.resolve())
        git(["rev-parse", "--verify", "--quiet", "HEAD"], top)
    except GitError as exc:
        raise ConfigError(f"--worktree needs a git repository with a commit: {exc}") from None
    ident = secrets.token_hex(4)
    folder = data_home / "worktrees" / f"{top.name}-{ident}"
    folder.parent.mkdir(parents=True, exist_ok=True)
    branch = f"{BRANCH_PREFIX}{ident}"
    add_worktree(top, folder, branch)
    return Worktree(top, folder, branch, repo.resolve().relative_to(top.resolve()))


def close_worktree(worktree: Worktree, end: WorktreeEnd) -> str:
    """Keep or remove the worktree; a line saying what became of it."""
    if end == "remove":
        remove_worktree(worktree.repo, worktree.path, worktree.branch)
        return f"worktree {worktree.path} and branch {worktree.branch} removed (the session log keeps the diff)"
    return f"worktree kept: {worktree.path} on branch {worktree.branch}"
