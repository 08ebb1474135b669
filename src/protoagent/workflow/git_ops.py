"""Every git command ProtoAgent runs for a person (commit, worktree): one hardened invocation.

The repository is untrusted input, and git runs programs its configuration names: hooks,
``core.fsmonitor``, filter drivers, textconv, pagers, editors, credential helpers and more.
``git`` here runs with those switched off the way MCP's git servers get them
(``integrations.mcp_git``): ``core.hooksPath`` is ``/dev/null``, ``core.fsmonitor`` false, and
every program-naming key the repository's own configuration sets (local and worktree scopes,
includes too) is overridden with one that runs nothing. The person's own global configuration
(their name and e-mail) still applies: it is theirs, not the repository's.

So a commit never passes ``--no-verify`` and never needs to: hooks are not skipped by a flag,
they cannot run at all. Environment ``GIT_*`` variables are dropped (a stray ``GIT_DIR`` must not
point git at another repository), git never prompts, and output is never paged.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from protoagent.errors import ConfigError
from protoagent.integrations.mcp_git import ALWAYS, neutral_overrides, repository_keys, with_overrides

GIT_TIMEOUT_S = 120.0


class GitError(ConfigError):
    """A git command failed; the message is git's first line of complaint."""


def git_env(cwd: Path) -> dict[str, str]:
    """The environment of a hardened git run in the repository at ``cwd``."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    base.update({"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "LC_ALL": "C"})
    return with_overrides(base, [*ALWAYS, *neutral_overrides(repository_keys(cwd))])


def git(args: Sequence[str], cwd: Path, *, stdin: str | None = None) -> str:
    """Run ``git ARGS`` in ``cwd`` with configuration-driven execution off; return stdout."""
    command = ["git", "--no-pager", *args]
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=git_env(cwd),
            input=stdin,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            check=False,
            stdin=None if stdin is not None else subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} could not run: {exc}") from None
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or done.stdout.strip().splitlines() or ["no message"])[0]
        raise GitError(f"git {args[0]} failed: {first}")
    return done.stdout


def toplevel(path: Path) -> Path:
    """The work tree ``path`` is in (``GitError`` when it is not in one)."""
    return Path(git(["rev-parse", "--show-toplevel"], path).strip())


def commit_paths(root: Path, paths: Sequence[str], message: str) -> str:
    """Commit exactly ``paths`` (relative to ``root``) with ``message``, whatever else is staged;
    return the new commit's id."""
    if not paths:
        raise GitError("nothing to commit: the session changed no files")
    pathspec = ["--", *(f":(literal){p}" for p in paths)]
    git(["add", "--all", *pathspec], root)
    git(["commit", "--quiet", "--only", "--file", "-", *pathspec], root, stdin=message)
    return git(["rev-parse", "HEAD"], root).strip()


def add_worktree(repo: Path, folder: Path, branch: str) -> Path:
    """A new worktree of ``repo`` at ``folder`` on a new ``branch`` from ``HEAD``."""
    git(["worktree", "add", "--quiet", "-b", branch, "--", str(folder), "HEAD"], repo)
    return folder


def remove_worktree(repo: Path, folder: Path, branch: str | None = None) -> None:
    """Remove the worktree at ``folder`` (and ``branch``, when given and merged nowhere else)."""
    git(["worktree", "remove", "--force", "--", str(folder)], repo)
    if branch is not None:
        git(["branch", "--quiet", "-D", "--", branch], repo)
