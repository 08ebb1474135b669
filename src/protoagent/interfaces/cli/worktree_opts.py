"""``run --worktree``'s options, and entering and leaving the worktree around a run."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING

from protoagent.errors import ConfigError

if TYPE_CHECKING:
    from protoagent.workflow.worktree import Worktree

WORKTREE_HELP = (
    "Work in a new git worktree on a new branch (protoagent/ID) under the data home, leaving this "
    "checkout untouched; kept at the end unless --worktree-end remove."
)
WORKTREE_END_HELP = "What becomes of the --worktree at the end: keep (default) or remove it and its branch."


class WorktreeEndChoice(StrEnum):
    keep = "keep"
    remove = "remove"


def enter_worktree(target: Path, resume: str | None, mode: str | None, home: Path) -> Worktree:
    """The worktree a new Coding session runs in (``ConfigError`` for a resume or Work mode)."""
    from protoagent.workflow.worktree import open_worktree

    if resume is not None:
        raise ConfigError("--worktree starts a new session; a resumed session keeps its own folder")
    if mode == "work":
        raise ConfigError("--worktree needs a Coding session in a git repository; drop --mode work")
    return open_worktree(target, home)
