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

GitPython, on which ``mcp-server-git`` is built, runs commit hooks itself (``.git/hooks`` or
the repository's ``core.hooksPath``), never through git, so no git configuration stops them: the
shim folder also holds a ``sitecustomize.py`` (:mod:`protoagent.integrations.gitpython_no_hooks`)
that servers find first on ``PYTHONPATH`` and that makes GitPython's hook runner run nothing. A
server started with ``python -I`` or ``-E`` ignores ``PYTHONPATH``.

A server may run git in another repository than its working directory (``repo_path``), one
the model may have made inside the workspace. So servers also find, first on ``PATH``, a ``git``
that runs this file as a script (``python -I -S mcp_git.py REAL_GIT ARGS...``, standard library
only): it computes the overrides for the repository of that very invocation, then ``exec``s the
real git.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Mapping, Sequence
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
SITE_FOLDER = ".python"
"""In the shim folder: the ``sitecustomize.py`` that stops GitPython's hooks (no command is named so)."""


WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env"})
"""Git's global options that take the next argument as their value."""


def git_safe_env(cwd: Path, env: Mapping[str, str], shim: Path | None = None) -> dict[str, str]:
    """``env`` plus the ``GIT_CONFIG_*`` overrides for the repository at ``cwd`` (after any the
    server's own ``env`` already sets) and, with ``shim`` (a folder from ``write_git_shim``),
    that folder first on ``PATH``."""
    result = with_overrides(env, [*ALWAYS, *neutral_overrides(repository_keys(cwd))])
    if shim is not None:
        result["PATH"] = f"{shim}{os.pathsep}{env.get('PATH', os.environ.get('PATH', os.defpath))}"
        own = env.get("PYTHONPATH")
        result["PYTHONPATH"] = os.pathsep.join([str(shim / SITE_FOLDER), *([own] if own else [])])
    return result


def write_git_shim(folder: Path) -> Path | None:
    """A folder holding a ``git`` that runs git through ``main`` below; ``None`` without git."""
    real = _real_git()
    if real is None:
        return None
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "git"
    launcher = shlex.join([sys.executable, "-I", "-S", str(Path(__file__).resolve()), real])
    script.write_text(f'#!/bin/sh\nexec {launcher} "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    site = folder / SITE_FOLDER
    site.mkdir(exist_ok=True)
    hooks_off = Path(__file__).with_name("gitpython_no_hooks.py").read_text(encoding="utf-8")
    (site / "sitecustomize.py").write_text(hooks_off, encoding="utf-8")
    return folder


def _real_git() -> str | None:
    import shutil

    found = shutil.which("git")
    return str(Path(found).resolve()) if found is not None else None


def with_overrides(env: Mapping[str, str], overrides: Sequence[tuple[str, str]]) -> dict[str, str]:
    """``env`` with ``overrides`` appended to its ``GIT_CONFIG_COUNT`` entries."""
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


def main(argv: list[str]) -> None:
    """``mcp_git.py REAL_GIT ARGS...``: run git with the overrides for this invocation's repository."""
    real, args = argv[0], argv[1:]
    options = _global_options(args)
    keys = repository_keys(Path.cwd(), [real, *options])
    env = with_overrides(os.environ, [*ALWAYS, *neutral_overrides(keys)])
    os.execve(real, [real, *args], env)


def _global_options(args: list[str]) -> list[str]:
    """The options before git's subcommand (``-C DIR``, ``--git-dir=...``), minus ``-c`` settings."""
    kept: list[str] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        arg = args[index]
        takes_value = arg in WITH_VALUE
        value = args[index + 1 : index + 2] if takes_value else []
        if arg not in ("-c", "--config-env") and not arg.startswith("--config-env="):
            kept += [arg, *value]
        index += 2 if takes_value else 1
    return kept


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


def repository_keys(cwd: Path, git: Sequence[str] = ("git",)) -> list[str]:
    """The configuration keys the repository at ``cwd`` sets itself (its includes too);
    ``git`` is the program and the global options that choose the repository."""
    command = [*git, "config", "--list", "--show-scope", "--name-only", "--includes", "-z"]
    environment = {
        **{k: v for k, v in os.environ.items() if k in ("GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR")},
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


if __name__ == "__main__":
    main(sys.argv[1:])
