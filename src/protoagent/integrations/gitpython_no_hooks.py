"""``sitecustomize`` for the Python MCP servers ProtoAgent starts in a repository: GitPython runs
no hooks.

GitPython's ``IndexFile.commit`` (``mcp-server-git``'s ``git_commit``) runs the repository's
``pre-commit``, ``commit-msg`` and ``post-commit`` hooks itself, from ``.git/hooks`` or the
repository's ``core.hooksPath``, without asking git, so git's own override of ``core.hooksPath``
never reaches it. ``mcp_git.write_git_shim`` copies this file as ``sitecustomize.py`` into a
folder put first on the server's ``PYTHONPATH``; when ``git.index.fun`` is imported, its
``run_commit_hook`` is replaced by one that runs nothing, before ``git.index.base`` binds it. A
``sitecustomize`` this one shadows still runs. Standard library only.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from types import ModuleType

HOOKS_MODULE = "git.index.fun"


def run_no_hook(name: str, index: object, *args: str) -> None:
    """GitPython's ``run_commit_hook``, running nothing."""


class _NoHookLoader(importlib.abc.Loader):
    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._loader.exec_module(module)
        module.run_commit_hook = run_no_hook  # type: ignore[attr-defined]


class NoHookFinder(importlib.abc.MetaPathFinder):
    """Finds ``git.index.fun`` through the other finders and wraps its loader."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != HOOKS_MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _NoHookLoader(spec.loader)
                return spec
        return None


def _run_shadowed() -> None:
    """Run the ``sitecustomize`` that this one hides further down ``sys.path``."""
    here = os.path.dirname(os.path.abspath(__file__))
    for entry in sys.path:
        candidate = os.path.join(entry or ".", "sitecustomize.py")
        if os.path.abspath(entry or ".") == here or not os.path.isfile(candidate):
            continue
        spec = importlib.util.spec_from_file_location("_protoagent_shadowed_sitecustomize", candidate)
        if spec is not None and spec.loader is not None:
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        return


def install() -> None:
    if not any(isinstance(finder, NoHookFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, NoHookFinder())


if __name__ == "sitecustomize":
    install()
    _run_shadowed()
