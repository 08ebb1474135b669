"""A check run in a scratch copy imports the project from the copy, not from the workspace.

A check captured in the workspace names its interpreter by absolute path
(``/repo/.venv/bin/python -m pytest``), and an environment installs the project by path: a
``.pth`` line (``../../../../src`` beside the site-packages, or the absolute folder an editable
install wrote) or an editable finder's mapping of a package to its folder. Run as captured in a
copy, that interpreter imports the workspace's modules, and the copy's check measures the
workspace: a regression proof on a ``src/`` layout saw the fixed source where the unfixed one was
restored. ``in_copy`` rewrites the check for the copy: an interpreter inside the workspace is the
same path inside the copy (the environment folder is linked there), and every folder inside the
workspace that the environment's ``.pth`` files or editable finders put on ``sys.path`` goes, as
the copy's folder, first on ``PYTHONPATH`` (before the ``.pth`` folders, which ``site`` appends).

Pure reads of the environment's files; nothing is imported or run.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from pathlib import Path

from protoagent.checks.types import CheckSpec

MAX_PTH_BYTES = 64 * 1024
_FINDER = "__editable___*_finder.py"
_QUOTED_PATH = re.compile(r"""['"]((?:/|[A-Za-z]:[\\/])[^'"\n]+)['"]""")


def in_copy(check: CheckSpec, workspace: Path, copy: Path, python: str) -> CheckSpec:
    """``check`` as it runs in ``copy`` (see the module docstring); unchanged when it names no
    interpreter inside the workspace and its environment installs nothing from it. ``python`` is
    the session's interpreter, which a program named without a folder (``python``) runs."""
    if not check.argv:
        return check
    program = copied_path(check.argv[0], workspace, copy)
    interpreter = check.argv[0] if "/" in check.argv[0] else python
    roots = [str(copy / r) for r in import_roots(interpreter, workspace)]
    env = dict(check.env)
    if roots:
        env["PYTHONPATH"] = os.pathsep.join([*roots, *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    if program == check.argv[0] and env == dict(check.env):
        return check
    return replace(check, argv=(program, *check.argv[1:]), env=env)


def copied_path(path: str, workspace: Path, copy: Path) -> str:
    """An absolute ``path`` inside ``workspace`` as the same path inside ``copy``; any other as it is."""
    inside = _relative(path, workspace) if os.path.isabs(path) else None
    return str(copy / inside) if inside is not None else path


def import_roots(python: str, workspace: Path) -> list[str]:
    """Workspace-relative folders the environment of ``python`` (a virtual environment's
    interpreter) puts on ``sys.path`` through ``.pth`` files and editable finders, in order."""
    if not os.path.isabs(python):
        python = os.path.join(workspace, python)
    environment = Path(python).parent.parent
    if not (environment / "pyvenv.cfg").is_file():
        return []
    found: list[str] = []
    for site in sorted([*environment.glob("lib/python*/site-packages"), *environment.glob("Lib/site-packages")]):
        for folder in [*_pth_folders(site), *_finder_folders(site)]:
            inside = _relative(folder, workspace)
            if inside is not None and inside not in found:
                found.append(inside)
    return found


def _pth_folders(site: Path) -> list[str]:
    """The folders ``site`` would add for its ``.pth`` files (``import`` lines and comments skipped)."""
    folders = []
    for pth in sorted(site.glob("*.pth")):
        for line in _text(pth).splitlines():
            line = line.strip()
            if line and not line.startswith(("#", "import ", "import\t")):
                folders.append(os.path.normpath(os.path.join(site, line)))
    return folders


def _finder_folders(site: Path) -> list[str]:
    """The folders holding the packages editable finders map (``{'pkg': '/repo/src/pkg'}``)."""
    return [
        os.path.dirname(os.path.normpath(m.group(1)))
        for finder in sorted(site.glob(_FINDER))
        for m in _QUOTED_PATH.finditer(_text(finder))
    ]


def _text(path: Path) -> str:
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_PTH_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def _relative(path: str, workspace: Path) -> str | None:
    """``path`` relative to ``workspace`` (as written or with symlinks resolved), ``None`` outside it."""
    written = (str(workspace), os.path.normpath(path))
    for base, candidate in (written, (os.path.realpath(workspace), os.path.realpath(path))):
        if os.path.commonpath([base, candidate]) == base:
            return os.path.relpath(candidate, base)
    return None
