"""What a Python name means, from the facts of the files alone (nothing is imported or run).

A chain as written (``self.send``, ``models.Model``, ``helper``) is resolved in its scope: the
enclosing functions' own names and imports first (a local of unknown type resolves to nothing),
``self``/``cls`` to the enclosing class, then the module's definitions, its imports (re-exports
followed through ``__init__`` files and ``from m import *``) and aliases (``Y = X``); attributes
through modules, submodules and classes with their bases in order. When the files do not decide
(a base class from outside the repository, a name bound twice, a value of unknown type) the
answer is ``None``: no answer is better than a wrong one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protoagent.navigation.facts import CALLED, SUPER, UNKNOWN, Definition, FileFacts
from protoagent.navigation.python_facts import MODULE_HEAD

MAX_DEPTH = 12
"""Imports, aliases and bases followed for one name before giving up (cycles end here too)."""


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved symbol: a module (``qualname`` empty) or a definition in ``path``."""

    path: str
    qualname: str
    kind: str
    instance: bool = False
    """An instance of the class ``qualname`` (``self``, ``x = Client()``), not the class itself."""


class Resolver:
    """Resolves chains over the files an index holds; answers are memoized until ``reset``."""

    def __init__(
        self, facts_of: Callable[[str], FileFacts | None], path_of_module: Callable[[str], str | None]
    ) -> None:
        self._facts_of = facts_of
        self._path_of = path_of_module
        self._members: dict[tuple[str, str], Target | None] = {}
        self._tops: dict[str, dict[str, Definition]] = {}

    def resolve(self, facts: FileFacts, scope: str, chain: tuple[str, ...], depth: int = 0) -> Target | None:
        """The symbol ``chain`` names inside definition ``scope`` of ``facts``."""
        if depth > MAX_DEPTH or not chain:
            return None
        head, rest = chain[0], chain[1:]
        found: Target | None
        if head == MODULE_HEAD:
            found = self._module(chain[1]) if len(chain) > 1 else None
            rest = chain[2:]
        elif head == SUPER:
            cls = self._enclosing_class(facts, scope)
            if cls is None or not rest:
                return None
            found = self._in_bases(facts, cls, rest[0], depth)
            rest = rest[1:]
        elif head == UNKNOWN:
            return None
        else:
            found = self._name(facts, scope, head, depth)
        for attr in rest:
            if found is None:
                return None
            if attr == CALLED:  # calling a class makes an instance; what a function returns is unknown
                found = Target(found.path, found.qualname, "class", True) if _is_class(found) else None
                continue
            found = self.member(found, attr, depth + 1)
        return found

    def member(self, owner: Target, attr: str, depth: int = 0) -> Target | None:
        """Attribute ``attr`` of a module, a class or an instance."""
        if depth > MAX_DEPTH:
            return None
        if owner.kind == "module":
            return self.module_member(owner.path, attr, depth)
        if owner.kind == "class":
            return self._class_member(owner.path, owner.qualname, attr, depth)
        return None

    def module_member(self, path: str, name: str, depth: int = 0) -> Target | None:
        key = (path, name)
        if key in self._members:
            return self._members[key]
        self._members[key] = None  # a cycle of re-exports resolves to nothing
        found = self._module_member(path, name, depth)
        self._members[key] = found
        return found

    def _module_member(self, path: str, name: str, depth: int) -> Target | None:
        facts = self._facts_of(path)
        if facts is None or depth > MAX_DEPTH:
            return None
        own = self._top(facts).get(name)
        if own is not None:
            return self._definition(facts, own, "", depth)
        imported = facts.imports.get(name)
        if imported is not None:
            return self._follow(imported, depth + 1)
        for source in facts.star_imports:
            star = self._path_of(source)
            other = self._facts_of(star) if star else None
            if other is None or (other.exported is None and name.startswith("_")):
                continue
            if other.exported is not None and name not in other.exported:
                continue
            hit = self.module_member(other.path, name, depth + 1)
            if hit is not None:
                return hit
        return self._module(f"{facts.module}.{name}") if facts.path.endswith("__init__.py") else None

    def _top(self, facts: FileFacts) -> dict[str, Definition]:
        """The module's top-level definitions by name (a later one replaces an earlier one)."""
        tops = self._tops.get(facts.path)
        if tops is None:
            tops = {d.qualname: d for d in facts.definitions if "." not in d.qualname}
            self._tops[facts.path] = tops
        return tops

    def _definition(self, facts: FileFacts, found: Definition, scope: str, depth: int) -> Target:
        aliased = facts.aliases.get(found.qualname)
        if aliased is not None:
            outer = found.qualname.rpartition(".")[0]
            meant = self.resolve(facts, outer, aliased, depth + 1)
            if meant is not None:
                return meant
        return Target(facts.path, found.qualname, found.kind if found.kind != "method" else "function")

    def _follow(self, imported: tuple[str, str | None], depth: int) -> Target | None:
        module, name = imported
        if name is None:
            return self._module(module)
        path = self._path_of(module)
        if path is not None:
            hit = self.module_member(path, name, depth)
            if hit is not None:
                return hit
        return self._module(f"{module}.{name}")

    def _module(self, name: str) -> Target | None:
        path = self._path_of(name)
        return Target(path, "", "module") if path is not None else None

    def _name(self, facts: FileFacts, scope: str, name: str, depth: int) -> Target | None:
        if name in ("self", "cls") and scope:
            cls = self._enclosing_class(facts, scope)
            if cls is not None:
                return Target(facts.path, cls, "class", instance=name == "self")
        parts = scope.split(".") if scope else []
        for size in range(len(parts), 0, -1):
            prefix = ".".join(parts[:size])
            local = facts.scopes.get(prefix)
            if local is None:
                continue
            if facts.bases.get(prefix) is not None:  # a class body's names are not seen by its methods
                if size == len(parts) and name in local.locals:
                    return self._class_member(facts.path, prefix, name, depth)
                continue
            if name in local.imports:
                return self._follow(local.imports[name], depth + 1)
            if name in local.types:
                made = self.resolve(facts, prefix, local.types[name], depth + 1)
                return Target(made.path, made.qualname, "class", True) if made and made.kind == "class" else None
            if name in local.locals:
                nested = facts.definition(f"{prefix}.{name}")
                return self._definition(facts, nested, prefix, depth) if nested is not None else None
        return self.module_member(facts.path, name, depth)

    def _enclosing_class(self, facts: FileFacts, scope: str) -> str | None:
        parts = scope.split(".")
        for size in range(len(parts) - 1, 0, -1):
            prefix = ".".join(parts[:size])
            if prefix in facts.bases:
                return prefix
        return None

    def _class_member(self, path: str, cls: str, attr: str, depth: int) -> Target | None:
        facts = self._facts_of(path)
        if facts is None or depth > MAX_DEPTH:
            return None
        own = [d for d in facts.definitions if d.qualname == f"{cls}.{attr}"]
        if own:
            return self._definition(facts, own[-1], cls, depth)
        return self._in_bases(facts, cls, attr, depth)

    def _in_bases(self, facts: FileFacts, cls: str, attr: str, depth: int) -> Target | None:
        """The first base (left to right, depth first) that has ``attr``; ``None`` as soon as a
        base the files cannot show comes first, since it might define the name itself."""
        outer = cls.rpartition(".")[0]
        for chain in facts.bases.get(cls, ()):
            if chain == ("object",):
                continue
            base = self.resolve(facts, outer, chain, depth + 1)
            if base is None or base.kind != "class" or base.instance:
                return None
            hit = self._class_member(base.path, base.qualname, attr, depth + 1)
            if hit is not None:
                return hit
        return None


def _is_class(found: Target) -> bool:
    return found.kind == "class" and not found.instance
