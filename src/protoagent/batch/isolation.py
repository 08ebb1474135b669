"""Every batch task works in its own copy of its repository, never in the original.

A local folder is copied whole (uncommitted work included, symlinks kept as links); a git URL,
or a local folder with a ``commit``, is cloned and checked out at that commit (a local
repository's own virtual environment is linked into its clone, see ``share_environment``). Git runs with
configuration-driven execution switched off (no hooks, no fsmonitor, no system or global
config or attributes), since the repository is untrusted input; ``run_git`` is
that one way to run git, for the copies and for the patches made in them.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protoagent.batch.tasks import BatchTask
from protoagent.errors import ConfigError
from protoagent.workspace.confined import read_confined

_GIT_TIMEOUT_S = 300
_ENVIRONMENTS = (".venv", "venv")
"""A repository's own virtual environment folders, as interpreter selection looks for them."""


def _git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    }


_HARDENED = (
    "core.hooksPath=" + os.devnull,
    "core.fsmonitor=false",
    "core.attributesFile=" + os.devnull,
    "protocol.ext.allow=never",
)


def run_git(args: list[str], cwd: Path, home: Path, *, stdin: str | None = None) -> str:
    """Run git hardened (see the module docstring) and return its output; ``ConfigError`` with
    git's first line of complaint when it fails."""
    command = ["git", *(part for setting in _HARDENED for part in ("-c", setting)), *args]
    data = None if stdin is None else stdin.encode("utf-8")
    try:
        done = subprocess.run(
            command, cwd=cwd, env=_git_env(home), input=data, capture_output=True, timeout=_GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"git {args[0]} could not run: {exc}") from None
    if done.returncode != 0:
        first = (done.stderr.decode("utf-8", "replace").strip().splitlines() or ["no message"])[0]
        raise ConfigError(f"git {args[0]} failed: {first}")
    try:
        return done.stdout.decode("utf-8")
    except UnicodeDecodeError:
        # A patch must survive JSON exactly; a file that is not UTF-8 text cannot.
        raise ConfigError(f"git {args[0]} wrote output that is not UTF-8 text (a file in another encoding)") from None


def clone_at(source: str, commit: str, dest: Path) -> Path:
    """A fresh clone of ``source`` (a URL or a local repository) at ``commit``, detached.

    A local repository is cloned without hard links, so nothing done in the copy can reach the
    original's object files.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    local = [] if "://" in source or source.startswith("git@") else ["--no-hardlinks"]
    # After "--" the URL and folder are never read as options (no --upload-pack=...).
    run_git(["clone", "--quiet", "--no-checkout", *local, "--", source, str(dest)], dest.parent, dest.parent)
    run_git(["checkout", "--quiet", "--detach", commit], dest, dest.parent)
    return dest


def prepare_workspace(task: BatchTask, dest: Path) -> Path:
    """Make ``dest`` the task's private copy of its repository and apply its check override."""
    if task.is_remote or task.commit is not None:
        if not task.is_remote and not Path(task.repo, ".git").exists():
            raise ConfigError(f"task {task.id!r}: {task.repo!r} is not a git repository; drop commit or use a clone")
        clone_at(task.repo, _revision(task), dest)
        if not task.is_remote:
            share_environment(Path(task.repo), dest)
    else:
        source = Path(task.repo)
        if not source.is_dir():
            raise ConfigError(f"task {task.id!r}: repository {task.repo!r} is not a folder")
        shutil.copytree(source, dest, symlinks=True, copy_function=_copy_regular(task))
    if task.checks is not None:
        _write_checks(dest, task.checks)
    return dest


def share_environment(source: Path, clone: Path) -> None:
    """Give a clone of a local repository that repository's own virtual environment (``.venv`` or
    ``venv``, untracked, so the clone lacks it) as a link, which git is told to ignore there, so
    the task's checks run where the user's would and its patch never holds the link."""
    for name in _ENVIRONMENTS:
        env = source / name
        if (env / "pyvenv.cfg").is_file() and not os.path.lexists(clone / name):
            (clone / name).symlink_to(env.resolve(), target_is_directory=True)
            exclude = clone / ".git" / "info" / "exclude"
            exclude.parent.mkdir(exist_ok=True)
            with open(exclude, "a", encoding="utf-8") as handle:
                handle.write(f"\n/{name}\n")
            return


def _revision(task: BatchTask) -> str:
    """The commit to check out; a value git could read as an option is refused."""
    commit = task.commit or "HEAD"
    if commit.startswith("-") or not commit.strip() or any(ord(ch) < 33 for ch in commit):
        raise ConfigError(f"task {task.id!r}: commit {commit!r} is not a revision; give a commit id, tag or branch")
    return commit


def _copy_regular(task: BatchTask) -> Callable[[str, str], object]:
    """``shutil.copy2`` for regular files; a FIFO, socket or device is refused in one line, never opened."""

    def copy(source: str, target: str) -> object:
        mode = os.lstat(source).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise ConfigError(
                f"task {task.id!r}: {source} is not a regular file (a FIFO, socket or device); "
                "remove it from the repository"
            )
        return shutil.copy2(source, target, follow_symlinks=False)

    return copy


def _write_checks(root: Path, checks: list[dict[str, Any]]) -> None:
    """Put the task's checks into the copy's ``project.json``, keeping its other fields.

    The copy is the task's own: a ``.protoagent`` or ``project.json`` that is a symbolic link is
    replaced by a real one, so neither the read nor the write can reach a file outside the copy.
    """
    folder = root / ".protoagent"
    config = folder / "project.json"
    try:
        loaded = json.loads(read_confined(root, ".protoagent/project.json", limit=1 << 20).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        loaded = {}
    data: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    data["checks"] = checks
    for link in (folder, config):
        if link.is_symlink():
            link.unlink()
    folder.mkdir(exist_ok=True)
    if config.exists() and not config.is_file():
        raise ConfigError(f"{config}: is not a regular file; remove it from the repository")
    fd = os.open(config, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2) + "\n")
