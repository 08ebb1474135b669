"""Facts of a Python file from the standard library's ``ast``: the file is parsed, never run."""

from __future__ import annotations

import ast
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from protoagent.navigation.facts import (
    CALLED,
    SUPER,
    UNKNOWN,
    Definition,
    DefKind,
    FileFacts,
    Reference,
    RefKind,
    Scope,
)

MODULE_HEAD = "<module>"
"""The head of an import reference's chain: ``("<module>", "pkg.mod", "name")``."""
Function = ast.FunctionDef | ast.AsyncFunctionDef


def python_facts(path: str, revision: str, module: str, text: str) -> FileFacts:
    """The facts of one Python file named ``module``; a file that does not parse has none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes in old code are the file's business
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as err:
        return FileFacts(path, revision, "python", module, (), (), {}, error=f"not parsed: {err}")
    package = module if path.endswith("__init__.py") else module.rpartition(".")[0]
    walker = _Walker(package)
    try:
        walker.walk_module(tree)
    except RecursionError:
        return FileFacts(path, revision, "python", module, (), (), {}, error="not parsed: nested too deeply")
    top = walker.scopes.pop("", _ScopeBuilder())
    return FileFacts(
        path,
        revision,
        "python",
        module,
        tuple(walker.definitions),
        tuple(walker.references),
        top.imports,
        tuple(walker.star_imports),
        walker.exported,
        walker.bases,
        walker.aliases,
        {name: s.frozen() for name, s in walker.scopes.items()},
    )


@dataclass(slots=True)
class _ScopeBuilder:
    locals: set[str] = field(default_factory=set)
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    types: dict[str, tuple[str, ...]] = field(default_factory=dict)
    assigned: dict[str, int] = field(default_factory=dict)
    is_class: bool = False

    def frozen(self) -> Scope:
        types = {k: v for k, v in self.types.items() if self.assigned.get(k, 0) <= 1}
        return Scope(frozenset(self.locals), self.imports, types)


def chain_of(node: ast.expr) -> tuple[str, ...] | None:
    """``a.b.c`` as ``("a", "b", "c")``; ``super().m`` as ``("super()", "m")``; ``A().m`` as
    ``("A", "()", "m")``; else ``None``."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
        parts.append(SUPER)
    elif isinstance(node, ast.Call) and parts:
        made = chain_of(node.func)
        if made is None or made[0] == SUPER:
            return None
        return (*made, CALLED, *reversed(parts))
    elif isinstance(node, ast.Name):
        parts.append(node.id)
    else:
        return None
    return tuple(reversed(parts))


_HANDLERS: dict[type[ast.AST], Callable[[_Walker, Any], None]] = {}


class _Walker(ast.NodeVisitor):
    def __init__(self, package: str) -> None:
        self.package = package
        self.definitions: list[Definition] = []
        self.references: list[Reference] = []
        self.star_imports: list[str] = []
        self.exported: tuple[str, ...] | None = None
        self.bases: dict[str, tuple[tuple[str, ...], ...]] = {}
        self.aliases: dict[str, tuple[str, ...]] = {}
        self.scopes: dict[str, _ScopeBuilder] = {"": _ScopeBuilder()}
        self.stack: list[str] = [""]
        self.calls: set[int] = set()

    @property
    def scope(self) -> str:
        return self.stack[-1]

    def walk_module(self, tree: ast.Module) -> None:
        for node in tree.body:
            self.visit(node)

    def visit(self, node: ast.AST) -> None:
        """``NodeVisitor.visit`` with the handler looked up once per node class (indexing spends
        most of its time here)."""
        handler = _HANDLERS.get(type(node))
        if handler is None:
            handler = getattr(type(self), f"visit_{type(node).__name__}", None) or _Walker.generic_visit
            _HANDLERS[type(node)] = handler
        handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            self.visit(child)

    def _qual(self, name: str) -> str:
        return f"{self.scope}.{name}" if self.scope else name

    def _define(self, name: str, kind: DefKind, node: ast.AST) -> str:
        qual = self._qual(name)
        line = getattr(node, "lineno", 1)
        self.definitions.append(Definition(qual, kind, line, getattr(node, "end_lineno", None) or line))
        return qual

    def _refer(self, line: int, col: int, chain: tuple[str, ...], kind: RefKind) -> None:
        self.references.append(Reference(line, col, self.scope, chain, kind))

    # Definitions and scopes

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in (*node.decorator_list, *node.bases, *(k.value for k in node.keywords)):
            self.visit(expr)
        self._bind(node.name)
        qual = self._define(node.name, "class", node)
        self.bases[qual] = tuple(c for c in (chain_of(b) for b in node.bases) if c is not None)
        self.scopes[qual] = _ScopeBuilder(is_class=True)
        self.stack.append(qual)
        for child in node.body:
            self.visit(child)
        self.stack.pop()

    def visit_FunctionDef(self, node: Function) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: Function) -> None:
        args = node.args
        for expr in (*node.decorator_list, *args.defaults, *(d for d in args.kw_defaults if d is not None)):
            self.visit(expr)
        params = [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]
        for arg in params:
            if arg.annotation is not None:
                self.visit(arg.annotation)
        if node.returns is not None:
            self.visit(node.returns)
        self._bind(node.name)
        in_class = self.scopes[self.scope].is_class
        qual = self._define(node.name, "method" if in_class else "function", node)
        scope = _ScopeBuilder(locals={a.arg for a in params})
        for arg in params:
            typed = chain_of(arg.annotation) if arg.annotation is not None else None
            if typed is not None:
                scope.types[arg.arg] = typed
        self.scopes[qual] = scope
        self.stack.append(qual)
        for child in node.body:
            self.visit(child)
        self.stack.pop()

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.body)  # a lambda's parameters shadow little; its body is read in place

    def visit_Global(self, node: ast.Global) -> None:
        self.scopes[self.scope].locals.difference_update(node.names)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.scopes[self.scope].locals.difference_update(node.names)

    def _bind(self, name: str) -> None:
        if self.scope:
            builder = self.scopes[self.scope]
            builder.locals.add(name)
            builder.assigned[name] = builder.assigned.get(name, 0) + 1

    # Assignments

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._target(target, node.value, node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.annotation)
        if node.value is not None:
            self.visit(node.value)
        self._target(node.target, node.value, node)
        typed = chain_of(node.annotation)
        if isinstance(node.target, ast.Name) and typed is not None and self.scope:
            self.scopes[self.scope].types[node.target.id] = typed

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        self.visit(node.target)

    def _target(self, target: ast.expr, value: ast.expr | None, node: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self._assign_name(target.id, value, node)
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                self._target(element, None, node)
        elif isinstance(target, ast.Starred):
            self._target(target.value, None, node)
        else:
            self.visit(target)  # a.b = ... reads a; x[i] = ... reads x and i

    def _assign_name(self, name: str, value: ast.expr | None, node: ast.stmt) -> None:
        builder = self.scopes[self.scope]
        if name == "__all__" and not self.scope and isinstance(value, ast.List | ast.Tuple):
            names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            self.exported = tuple(names)
        if not self.scope or builder.is_class:
            qual = self._define(name, "attribute" if builder.is_class else "variable", node)
            aliased = chain_of(value) if value is not None else None
            if aliased is not None:
                self.aliases[qual] = aliased
        self._bind(name)
        if self.scope and isinstance(value, ast.Call):
            made = chain_of(value.func)
            if made is not None:
                builder.types[name] = made

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self._loose_target(node.target)
        for child in (*node.body, *node.orelse):
            self.visit(child)

    visit_AsyncFor = visit_For

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._loose_target(item.optional_vars)
        for child in node.body:
            self.visit(child)

    visit_AsyncWith = visit_With

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._bind(node.name)
        for child in node.body:
            self.visit(child)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind(node.target.id)

    def visit_comprehension(self, node: ast.comprehension) -> None:
        self.visit(node.iter)
        self._loose_target(node.target)
        for condition in node.ifs:
            self.visit(condition)

    def _loose_target(self, target: ast.expr) -> None:
        """Names bound by a loop, ``with`` or comprehension: local, of no known type."""
        for child in ast.walk(target):
            if isinstance(child, ast.Name):
                self._bind(child.id)
            elif isinstance(child, ast.Attribute | ast.Subscript):
                self.visit(child)
                break

    # Imports

    def visit_Import(self, node: ast.Import) -> None:
        builder = self.scopes[self.scope]
        for alias in node.names:
            local = alias.asname or alias.name.split(".")[0]
            target = alias.name if alias.asname else alias.name.split(".")[0]
            builder.imports[local] = (target, None)
            self._bind(local)
            self._refer(node.lineno, node.col_offset, (MODULE_HEAD, alias.name), "import")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        source = self._absolute(node)
        builder = self.scopes[self.scope]
        for alias in node.names:
            if alias.name == "*":
                if source:
                    self.star_imports.append(source)
                continue
            local = alias.asname or alias.name
            builder.imports[local] = (source, alias.name)
            self._bind(local)
            self._refer(node.lineno, node.col_offset, (MODULE_HEAD, source, alias.name), "import")

    def _absolute(self, node: ast.ImportFrom) -> str:
        """``from .x import y`` inside ``pkg`` names ``pkg.x``; absolute imports stay as written."""
        if not node.level:
            return node.module or ""
        parts = self.package.split(".") if self.package else []
        parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
        return ".".join([*parts, *([node.module] if node.module else [])])

    # References

    def visit_Call(self, node: ast.Call) -> None:
        self.calls.add(id(node.func))
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._refer(node.lineno, node.col_offset, (node.id,), self._use(node))
        elif isinstance(node.ctx, ast.Store):
            self._bind(node.id)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if isinstance(node.ctx, ast.Load):
            chain = chain_of(node) or (UNKNOWN, node.attr)
            line = node.end_lineno or node.lineno
            col = max((node.end_col_offset or 0) - len(node.attr), 0)
            self._refer(line, col, chain, self._use(node))
        self.visit(node.value)

    def _use(self, node: ast.expr) -> RefKind:
        return "call" if id(node) in self.calls else "read"
