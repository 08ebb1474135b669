"""Environment for MCP servers started in a repository: git ignores the repository's own
configuration where that configuration would run a program.

A git-based server (``mcp-server-git``) runs git in the workspace, and git reads the
repository's ``.git/config``: ``core.fsmonitor``, filter drivers, ``diff.external``, textconv,
hooks and a dozen more keys name commands it runs. The repository is untrusted input, so such
a key set there must not run through a server the person trusted. Git takes configuration from
the environment (``GIT_CONFIG_COUNT``/``GIT_CONFIG_KEY_n``/``GIT_CONFIG_VALUE_n``) above the
repository's file, so each such key the repository sets (read with ``git config --list``, which
runs nothing) is overridden with a value that runs nothing; hooks are always off and the
``ext::`` transport is refused. The person's own (global) configuration is left as it is.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping
from pathlib import Path

LIST_TIMEOUT_S = 10.0
ALWAYS: tuple[tuple[str, str], ...] = (
    ("core.hooksPath", os.devnull),
    ("core.fsmonitor", "false"),
    ("protocol.ext.allow", "never"),
)
"""Set for every server: hooks need no configuration key to run, and ``ext::`` URLs run commands."""
NEUTRAL: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), value)
    for pattern, value in (
        (r"core\.(sshcommand|gitproxy|askpass|alternaterefscommand)", ""),
        (r"core\.(editor|pager)", "false"),
        (r"sequence\.editor", "false"),
        (r"filter\..+\.(process|clean|smudge)", ""),
        (r"diff\.external", ""),
        (r"diff\..+\.(textconv|command)", ""),
        (r"(merge\..+\.driver|(diff|merge)tool\..+\.cmd)", "false"),
        (r"gpg\.(.+\.)?program", "false"),
        (r"credential\.(.+\.)?helper", ""),
        (r"pager\..+", "false"),
        (r"interactive\.difffilter", ""),
        (r"remote\..+\.uploadpack", "git-upload-pack"),
        (r"remote\..+\.receivepack", "git-receive-pack"),
        (r"submodule\..+\.update", "none"),
    )
)
"""Keys that name a program, and a value for each that runs none."""
LOCAL_SCOPES = frozenset({"local", "worktree"})


def git_safe_env(cwd: Path, env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus the ``GIT_CONFIG_*`` overrides for the repository at ``cwd`` (after any the
    server's own ``env`` already sets)."""
    overrides = [*ALWAYS, *neutral_overrides(repository_keys(cwd))]
    result = dict(env)
    try:
        start = int(result.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        start = 0
    for offset, (key, value) in enumerate(overrides):
        result[f"GIT_CONFIG_KEY_{start + offset}"] = key
        result[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    result["GIT_CONFIG_COUNT"] = str(start + len(overrides))
    return result


def neutral_overrides(keys: list[str]) -> list[tuple[str, str]]:
    """The override for each key that names a program (git prints names lowercased, subsections
    as written)."""
    found: dict[str, str] = {}
    for key in keys:
        for pattern, value in NEUTRAL:
            if pattern.fullmatch(_lower_outer(key)):
                found.setdefault(key, value)
                break
    return sorted(found.items())


def repository_keys(cwd: Path) -> list[str]:
    """The configuration keys the repository at ``cwd`` sets itself (its includes too)."""
    command = ["git", "config", "--list", "--show-scope", "--name-only", "--includes", "-z"]
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "LC_ALL": "C",
    }
    try:
        done = subprocess.run(
            command, cwd=cwd, env=environment, capture_output=True, timeout=LIST_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return []  # no git, or no repository: the fixed overrides still apply
    fields = done.stdout.decode("utf-8", "replace").split("\0")  # scope, name, scope, name ...
    return [key for scope, key in zip(fields[::2], fields[1::2], strict=False) if scope in LOCAL_SCOPES and key]


def _lower_outer(key: str) -> str:
    """``filter.X.process`` with section and name lowercased, the subsection kept."""
    section, _, rest = key.partition(".")
    middle, dot, name = rest.rpartition(".")
    return f"{section.lower()}.{middle}{dot}{name.lower()}" if dot else f"{section.lower()}.{rest.lower()}"
