"""Which function a call runs, found by reading Python files (never importing them).

``resolve_call`` is the one interface: given a call inside a function of a workspace file, it
returns the definition that call runs when the files say so unambiguously. ``self.m()`` and
``cls.m()`` resolve through the enclosing class and then its bases (defined in the same module or
imported from a workspace file); ``super().m()`` through the bases only; a bare ``f()`` through the
module's own top-level functions and its imports; ``module.f()`` and ``Class.m()`` through the
imported module or the named class. Any other ``x.m()`` resolves only when exactly one function of
that name exists in the files considered. When the files do not decide (an unknown base class, a
name defined in two places), the answer is ``None``: showing nothing is better than showing the
wrong function as the one involved.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from protoagent.workspace.confined import read_confined

Function = ast.FunctionDef | ast.AsyncFunctionDef
MAX_DEPTH = 5
"""Re-exports and base classes followed before giving up."""


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
    """One parsed workspace file and what its top level defines and imports."""

    path: str
    tree: ast.Module
    lines: tuple[str, ...]
    functions: dict[str, Function]
    classes: dict[str, ast.ClassDef]
    imports: dict[str, tuple[str, str | None] | None]
    """Local name -> (module, name in it; ``None`` for ``import m``); ``None`` when the name is
    imported from two different places."""
    parents: dict[int, ast.AST]
    """``id(node)`` -> its parent node."""


def parse_module(root: Path, rel: str) -> Module | None:
    """The parsed file ``rel`` under ``root``, or ``None`` when it cannot be read or parsed."""
    try:
        # Confined like read_file: a link out of the repository, or a FIFO, is not read.
        text = read_confined(root, rel).decode("utf-8")
        tree = ast.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    functions: dict[str, Function] = {}
    classes: dict[str, ast.ClassDef] = {}
    for node in tree.body:  # at the top level a later definition replaces an earlier one
        if isinstance(node, Function) and not is_overload(node):
            functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
    parents = {id(child): node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    return Module(rel, tree, tuple(text.splitlines()), functions, classes, _imports(tree, rel), parents)


def _imports(tree: ast.Module, rel: str) -> dict[str, tuple[str, str | None] | None]:
    found: dict[str, tuple[str, str | None] | None] = {}

    def add(name: str, target: tuple[str, str | None]) -> None:
        found[name] = target if found.get(name, target) == target else None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None:
                    add(alias.asname, (alias.name, None))
                else:
                    add(alias.name.split(".")[0], (alias.name.split(".")[0], None))
        elif isinstance(node, ast.ImportFrom):
            module = _absolute_module(node, rel)
            for alias in node.names:
                if alias.name != "*" and module:
                    add(alias.asname or alias.name, (module, alias.name))
    return found


def _absolute_module(node: ast.ImportFrom, rel: str) -> str:
    """``from .x import y`` in ``pkg/mod.py`` names ``pkg.x``; absolute imports stay as written."""
    if not node.level:
        return node.module or ""
    package = list(Path(rel).parent.parts)
    package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
    return ".".join([*package, *([node.module] if node.module else [])])


def is_overload(node: Function) -> bool:
    """A ``typing.overload`` stub: its body is ``...``; the implementation follows it."""
    for decorator in node.decorator_list:
        name = decorator.attr if isinstance(decorator, ast.Attribute) else getattr(decorator, "id", "")
        if name == "overload":
            return True
    return False


def module_files(root: Path, importer: str, module: str) -> list[str]:
    """Workspace files that ``module`` may name when imported from ``importer``."""
    parts = module.split(".")
    here = Path(importer).parent
    out = []
    for base in (Path("."), here, Path("src"), here.parent):
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if (root / candidate).is_file():
                out.append(os.path.normpath(candidate).replace(os.sep, "/"))
    return list(dict.fromkeys(out))


class Resolver:
    """Resolves calls in the files under one root; parsed files are kept for its lifetime."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._modules: dict[str, Module | None] = {}

    def module(self, rel: str) -> Module | None:
        if rel not in self._modules:
            self._modules[rel] = parse_module(self.root, rel)
        return self._modules[rel]

    def resolve_call(self, rel: str, call: ast.Call, scope: Function | None) -> Definition | None:
        """The function ``call`` (inside ``scope`` of file ``rel``) runs, or ``None`` when the
        files do not say it unambiguously."""
        module = self.module(rel)
        if module is None:
            return None
        func = call.func
        if isinstance(func, ast.Name):
            return self._name(module, func.id, 0)
        if not isinstance(func, ast.Attribute):
            return None
        owner, attr = func.value, func.attr
        cls = _enclosing_class(module, scope) if scope is not None else None
        if isinstance(owner, ast.Name) and owner.id in ("self", "cls") and cls is not None:
            return self._method(module, cls, attr, 0)
        if _is_super(owner) and cls is not None:
            return self._in_bases(module, cls, attr, 0)
        if isinstance(owner, ast.Name):
            target = self._named(module, owner.id)
            if target is not None:
                return target(attr)
        return self._unique(module, attr)

    def _named(self, module: Module, name: str) -> Callable[[str], Definition | None] | None:
        """A resolver for attributes of ``name`` when it names a module or a class; else ``None``."""
        if name in module.classes:
            cls = module.classes[name]
            return lambda attr: self._method(module, cls, attr, 0)
        imported = module.imports.get(name)
        if imported is None:
            return None
        source, original = imported
        if original is None:
            return lambda attr: self._in_module(module.path, source, attr, 0)
        found = self._class(module, name, 0)
        if found is not None:
            owner, cls = found
            return lambda attr: self._method(owner, cls, attr, 0)
        return lambda attr: self._in_module(module.path, f"{source}.{original}", attr, 0)

    def _name(self, module: Module, name: str, depth: int) -> Definition | None:
        """A bare name: the module's own top-level function, else what it imports under that name."""
        if name in module.functions:
            return Definition(module.path, module.functions[name], module.lines)
        if name in module.classes or depth > MAX_DEPTH:
            return None
        imported = module.imports.get(name)
        if imported is None or imported[1] is None:
            return None
        return self._in_module(module.path, imported[0], imported[1], depth + 1)

    def _in_module(self, importer: str, source: str, name: str, depth: int) -> Definition | None:
        found = [
            d
            for rel in module_files(self.root, importer, source)
            if (m := self.module(rel)) is not None and (d := self._name(m, name, depth)) is not None
        ]
        return found[0] if len({(d.path, d.node.lineno) for d in found}) == 1 else None

    def _class(self, module: Module, name: str, depth: int) -> tuple[Module, ast.ClassDef] | None:
        """The class ``name`` means in ``module``: its own, or one it imports (re-exports followed)."""
        if name in module.classes:
            return module, module.classes[name]
        imported = module.imports.get(name)
        if imported is None or imported[1] is None or depth > MAX_DEPTH:
            return None
        found = []
        for rel in module_files(self.root, module.path, imported[0]):
            other = self.module(rel)
            hit = self._class(other, imported[1], depth + 1) if other is not None else None
            if hit is not None:
                found.append(hit)
        return found[0] if len({(m.path, c.lineno) for m, c in found}) == 1 else None

    def _base(self, module: Module, base: ast.expr) -> tuple[Module, ast.ClassDef] | None:
        if isinstance(base, ast.Name):
            return self._class(module, base.id, 0)
        if isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            imported = module.imports.get(base.value.id)
            if imported is not None and imported[1] is None:
                for rel in module_files(self.root, module.path, imported[0]):
                    other = self.module(rel)
                    if other is not None and base.attr in other.classes:
                        return other, other.classes[base.attr]
        return None

    def _method(self, module: Module, cls: ast.ClassDef, name: str, depth: int) -> Definition | None:
        """``name`` looked up on ``cls``: its own body first (the last definition wins), then its bases."""
        own = [n for n in cls.body if isinstance(n, Function) and n.name == name and not is_overload(n)]
        if own:
            return Definition(module.path, own[-1], module.lines)
        return self._in_bases(module, cls, name, depth)

    def _in_bases(self, module: Module, cls: ast.ClassDef, name: str, depth: int) -> Definition | None:
        """The first base (left to right, depth first) that defines ``name``; ``None`` as soon as a
        base the files cannot show comes first, since it might define the name itself."""
        if depth > MAX_DEPTH:
            return None
        for base in cls.bases:
            if isinstance(base, ast.Name) and base.id == "object":
                continue
            found = self._base(module, base)
            if found is None:
                return None
            hit = self._method(found[0], found[1], name, depth + 1)
            if hit is not None:
                return hit
        return None

    def _unique(self, module: Module, name: str) -> Definition | None:
        """The one function named ``name`` in the module and the workspace modules it imports."""
        files = [module.path]
        for source, _ in (t for t in module.imports.values() if t is not None):
            files.extend(module_files(self.root, module.path, source))
        found: dict[tuple[str, int], Definition] = {}
        for rel in dict.fromkeys(files):
            other = self.module(rel)
            if other is None:
                continue
            for node in ast.walk(other.tree):
                if isinstance(node, Function) and node.name == name and not is_overload(node):
                    found[(rel, node.lineno)] = Definition(rel, node, other.lines)
        return next(iter(found.values())) if len(found) == 1 else None


def _enclosing_class(module: Module, scope: Function) -> ast.ClassDef | None:
    """The nearest class whose body (directly or through nested functions) holds ``scope``."""
    node: ast.AST | None = module.parents.get(id(scope))
    while node is not None:
        if isinstance(node, ast.ClassDef):
            return node
        node = module.parents.get(id(node))
    return None


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"
