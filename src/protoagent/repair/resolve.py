"""Which function a call runs, decided by the navigation resolver (files are read, never imported).

Localization shows syntax (a function's lines, docstring, returns), so each parsed file keeps its
tree beside its navigation facts; what a call means is answered by
``navigation.resolve.Resolver`` over those facts, the same resolution ``code_context`` gives:
``self``/``cls`` through the class and its bases, ``super()`` through the bases, names through
imports, re-exports and aliases, a local made by ``X()`` as an instance of ``X``. Module names
come from the same listing the index uses (git's ignore rules, packages by ``__init__.py``). A
call the resolver cannot decide falls back to the one function of that name in the file and the
workspace modules it imports; calling a class, or a name defined in two places, gives ``None``:
showing nothing is better than showing the wrong function as the one involved.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from protoagent.navigation.facts import SUPER, FileFacts, Reference
from protoagent.navigation.index import module_names, unambiguous_modules
from protoagent.navigation.listing import list_sources
from protoagent.navigation.python_facts import python_facts
from protoagent.navigation.resolve import Resolver as NameResolver
from protoagent.workspace.confined import read_confined
from protoagent.workspace.files import revision_of
from protoagent.workspace.paths import open_root

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, slots=True)
class Definition:
    """A function found in a workspace file."""

    path: str
    """Workspace-relative POSIX path of the file defining it."""
    node: Function
    lines: tuple[str, ...]
    """The file's lines, without line endings."""


@dataclass(frozen=True, slots=True)
class Module:
    """One parsed workspace file: its tree and lines, and its navigation facts."""

    path: str
    tree: ast.Module
    lines: tuple[str, ...]
    facts: FileFacts
    calls: dict[tuple[int, int], Reference]
    """``(line, column)`` of a called name -> its reference in the facts."""


def parse_module(root: Path, rel: str, module: str = "") -> Module | None:
    """The parsed file ``rel`` under ``root``, or ``None`` when it cannot be read or parsed."""
    try:
        # Confined like read_file: a link out of the repository, or a FIFO, is not read.
        data = read_confined(root, rel)
        text = data.decode("utf-8")
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    facts = python_facts(rel, revision_of(data), module or Path(rel).stem, text)
    calls = {(r.line, r.col): r for r in facts.references if r.kind == "call"}
    return Module(rel, tree, tuple(text.splitlines()), facts, calls)


class Resolver:
    """Resolves calls in the files under one root; parsed files are kept for its lifetime."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._modules: dict[str, Module | None] = {}
        self._names: dict[str, str] | None = None
        self._paths: dict[str, str] = {}
        self._resolver = NameResolver(self._facts, self._path_of)

    def module(self, rel: str) -> Module | None:
        if rel not in self._modules:
            self._listing()
            self._modules[rel] = parse_module(self.root, rel, self._paths.get(rel, ""))
        return self._modules[rel]

    def resolve_call(self, rel: str, call: ast.Call, scope: Function | None = None) -> Definition | None:
        """The function ``call`` (in file ``rel``) runs, or ``None`` when the files do not say it
        unambiguously. ``scope`` is kept for callers; the facts know each call's scope."""
        module = self.module(rel)
        ref = module.calls.get(_position(call.func)) if module is not None else None
        if module is None or ref is None:
            return None
        target = self._resolver.resolve(module.facts, ref.scope, ref.chain)
        if target is None and len(ref.chain) > 1 and ref.chain[0] not in _CLASS_BOUND:
            return self._unique(module, ref.chain[-1])  # a value of unknown type: a unique name decides
        if target is not None and target.kind == "class":  # a constructor call runs __init__
            return self._definition(target.path, f"{target.qualname}.__init__")
        if target is None or target.kind != "function":
            return None
        return self._definition(target.path, target.qualname)

    def _definition(self, path: str, qualname: str) -> Definition | None:
        owner = self.module(path)
        found = owner.facts.definition(qualname) if owner is not None else None
        if owner is None or found is None:
            return None
        lines = [d.line for d in owner.facts.definitions if d.qualname == qualname]
        node = _function_at(owner.tree, lines[-1])  # the last one wins, as at run time (overloads first)
        return Definition(path, node, owner.lines) if node is not None else None

    def _unique(self, module: Module, name: str) -> Definition | None:
        """The one function named ``name`` in the module and the workspace modules it imports."""
        files = [module.path]
        for source, _ in module.facts.imports.values():
            path = self._path_of(source)
            if path is not None:
                files.append(path)
        found: set[tuple[str, str]] = set()
        for path in dict.fromkeys(files):
            other = self.module(path)
            if other is not None:
                found.update(
                    (path, d.qualname) for d in other.facts.definitions if d.name == name and d.kind in _CALLABLE
                )
        if len(found) != 1:
            return None
        path, qualname = found.pop()
        return self._definition(path, qualname)

    def _facts(self, path: str) -> FileFacts | None:
        module = self.module(path)
        return module.facts if module is not None else None

    def _path_of(self, module: str) -> str | None:
        self._listing()
        return (self._names or {}).get(module)

    def _listing(self) -> None:
        if self._names is not None:
            return
        try:
            with open_root(self.root) as root_fd:
                files = [p for p in list_sources(root_fd).files if p.endswith(".py")]
        except OSError:
            files = []
        self._paths = module_names(files)
        self._names = unambiguous_modules(self._paths)


_CALLABLE = frozenset({"function", "method"})
_CLASS_BOUND = frozenset({"self", "cls", SUPER})
"""Receivers whose class the files show: when its lookup fails, a namesake elsewhere is not it."""


def _position(func: ast.expr) -> tuple[int, int]:
    """Where the facts record the called name: a name's start, or an attribute's last part."""
    if isinstance(func, ast.Attribute):
        return (func.end_lineno or func.lineno, max((func.end_col_offset or 0) - len(func.attr), 0))
    return (func.lineno, func.col_offset)


def _function_at(tree: ast.Module, line: int) -> Function | None:
    for node in ast.walk(tree):
        if isinstance(node, Function) and node.lineno == line:
            return node
    return None
