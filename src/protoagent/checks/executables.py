"""Finding runners without running anything: the fixed system search path and workspace paths."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

SYSTEM_SEARCH_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
"""The application's fixed search path; the harness's own ``PATH`` is never consulted."""


TOOLCHAIN_VARIABLES = ("RUSTUP_HOME", "CARGO_HOME", "RUSTUP_TOOLCHAIN", "NVM_DIR", "NODE_PATH")
"""Variables a toolchain needs to start that carry over from the user's environment when set."""


def user_path(environ: Mapping[str, str] | None = None) -> list[str]:
    """The absolute entries of the user's ``PATH`` (relative entries are never searched)."""
    env = os.environ if environ is None else environ
    return [entry for entry in env.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]


def runner_search_path(environ: Mapping[str, str] | None = None) -> str:
    """The user's ``PATH``, then the fixed system search path and ``~/.cargo/bin`` (where rustup
    installs cargo), without repeats."""
    entries = [*user_path(environ), *SYSTEM_SEARCH_PATH, os.path.expanduser("~/.cargo/bin")]
    return os.pathsep.join(dict.fromkeys(entries))


def resolve_runner(name: str, environ: Mapping[str, str] | None = None) -> tuple[str, str | None]:
    """Resolve a bare runner name (``cargo``, ``npm``) over :func:`runner_search_path`.

    Returns ``(argv0, unavailable)``: the absolute path and ``None`` when found, otherwise the bare
    name and a sentence saying where it was looked for.
    """
    search = runner_search_path(environ)
    found = shutil.which(name, path=search)
    if found is not None:
        return found, None
    return name, f"{name!r} was not found on the search path {search}; install it or configure the check"


def toolchain_env(program: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a discovered runner needs to start under the checks' minimal environment.

    ``PATH`` as the user has it, with the runner's own folder first (npm scripts call ``node``,
    cargo calls ``rustc``); ``RUSTUP_HOME``, ``CARGO_HOME``, ``NVM_DIR`` and ``NODE_PATH`` when set.
    A rustup proxy (``…/.cargo/bin/cargo``) gets ``CARGO_HOME`` and ``RUSTUP_HOME`` spelled out,
    because the checks' ``HOME`` is a session folder where rustup would find no toolchain.
    """
    env = os.environ if environ is None else environ
    if not os.path.isabs(program):
        return {}
    folder = os.path.dirname(program)
    entries = dict.fromkeys([folder, *user_path(env), *SYSTEM_SEARCH_PATH])
    out = {"PATH": os.pathsep.join(entries)}
    out.update({name: env[name] for name in TOOLCHAIN_VARIABLES if env.get(name)})
    if os.path.basename(folder) == "bin" and os.path.basename(os.path.dirname(folder)) == ".cargo":
        cargo_home = os.path.dirname(folder)
        out.setdefault("CARGO_HOME", cargo_home)
        rustup_home = os.path.join(os.path.dirname(cargo_home), ".rustup")
        if os.path.isdir(rustup_home):
            out.setdefault("RUSTUP_HOME", rustup_home)
    return out


def is_executable_file(path: str) -> bool:
    """True when ``path`` names an existing file this process may execute (symlinks followed)."""
    return os.path.isfile(path) and os.access(path, os.X_OK)


def beneath_root(root: Path, relative: str) -> str | None:
    """Normalise a workspace-relative path lexically; ``None`` if absolute or escaping the root.

    Symlinks are deliberately not resolved: ``.venv/bin/python`` usually points outside the
    workspace and must keep its spelling.
    """
    if not relative or os.path.isabs(relative) or relative.startswith("~"):
        return None
    normal = os.path.normpath(relative).replace(os.sep, "/")
    if normal == ".." or normal.startswith("../"):
        return None
    joined = os.path.normpath(os.path.join(root, normal))
    if joined != str(root) and not joined.startswith(str(root).rstrip(os.sep) + os.sep):
        return None
    return normal
