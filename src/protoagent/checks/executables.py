"""Finding runners without running anything: the fixed system search path and workspace paths."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

SYSTEM_SEARCH_PATH = ("/usr/local/bin", "/usr/bin", "/bin")
"""The application's fixed search path; the harness's own ``PATH`` is never consulted."""


def runner_search_path() -> str:
    """The fixed system search path plus the user's ``~/.cargo/bin`` (where rustup installs cargo)."""
    return os.pathsep.join([*SYSTEM_SEARCH_PATH, os.path.expanduser("~/.cargo/bin")])


def resolve_runner(name: str) -> tuple[str, str | None]:
    """Resolve a bare runner name (``cargo``, ``npm``) over :func:`runner_search_path`.

    Returns ``(argv0, unavailable)``: the absolute path and ``None`` when found, otherwise the bare
    name and a sentence saying where it was looked for.
    """
    search = runner_search_path()
    found = shutil.which(name, path=search)
    if found is not None:
        return found, None
    return name, f"{name!r} was not found on the fixed search path {search}; install it or configure the check"


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
