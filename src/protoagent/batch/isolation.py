"""Every batch task works in its own copy of its repository, never in the original.

A local folder is copied whole (uncommitted work included, symlinks kept as links); a git URL
is cloned and checked out at the task's commit. Git runs with configuration-driven execution
switched off (no hooks, no fsmonitor, no system or global config), since the repository is
untrusted input.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from protoagent.batch.tasks import BatchTask
from protoagent.errors import ConfigError

_GIT_TIMEOUT_S = 300


def _git_env(home: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "LC_ALL": "C",
    }


def _git(args: list[str], cwd: Path, home: Path) -> None:
    command = ["git", "-c", "core.hooksPath=" + os.devnull, "-c", "core.fsmonitor=false", *args]
    try:
        done = subprocess.run(
            command, cwd=cwd, env=_git_env(home), capture_output=True, text=True, timeout=_GIT_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ConfigError(f"git {args[0]} could not run: {exc}") from None
    if done.returncode != 0:
        first = (done.stderr.strip().splitlines() or ["no message"])[0]
        raise ConfigError(f"git {args[0]} failed: {first}")


def prepare_workspace(task: BatchTask, dest: Path) -> Path:
    """Make ``dest`` the task's private copy of its repository and apply its check override."""
    if task.is_remote:
        dest.parent.mkdir(parents=True, exist_ok=True)
        _git(["clone", "--quiet", "--no-checkout", task.repo, str(dest)], dest.parent, dest.parent)
        _git(["checkout", "--quiet", task.commit or "HEAD"], dest, dest.parent)
    else:
        source = Path(task.repo)
        if not source.is_dir():
            raise ConfigError(f"task {task.id!r}: repository {task.repo!r} is not a folder")
        shutil.copytree(source, dest, symlinks=True)
    if task.checks is not None:
        _write_checks(dest, task.checks)
    return dest


def _write_checks(root: Path, checks: list[dict[str, Any]]) -> None:
    config = root / ".protoagent" / "project.json"
    data: dict[str, Any] = {}
    if config.is_file():
        try:
            loaded = json.loads(config.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            loaded = {}
        data = loaded if isinstance(loaded, dict) else {}
    data["checks"] = checks
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
