"""What one source file says about its symbols: definitions, references, imports and scopes.

Facts are plain tuples and strings so a file's facts are cached as one ``marshal`` blob and read
back without running anything. A reference's ``chain`` is the dotted expression as written
(``("self", "send")``, ``("models", "Model")``); resolving it to a definition needs the facts of
other files, which ``navigation.resolve`` does.
"""

from __future__ import annotations

import marshal
from dataclasses import dataclass, field
from typing import Literal

DefKind = Literal["module", "class", "function", "method", "variable", "attribute", "interface", "type", "enum"]
RefKind = Literal["call", "read", "import"]
Language = Literal["python", "javascript", "typescript"]

UNKNOWN = "<?>"
"""The head of a chain whose receiver is no plain name (``f().x``, ``a[0].x``)."""
CALLED = "()"
"""A call inside a chain: ``Client().send`` is ``("Client", "()", "send")``."""
SUPER = "super()"
"""The head of ``super().m``."""
FACTS_VERSION = 3
"""Bump when extraction changes, so cached facts from an older extractor are rebuilt."""


@dataclass(frozen=True, slots=True)
class Definition:
    """A symbol defined in a file: ``qualname`` is dotted inside the module (``Client.send``)."""

    qualname: str
    kind: DefKind
    line: int
    end_line: int

    @property
    def name(self) -> str:
        return self.qualname.rpartition(".")[2]


@dataclass(frozen=True, slots=True)
class Reference:
    """A use of a name: where, inside which definition, the chain as written, and how it is used."""

    line: int
    col: int
    scope: str
    """Qualname of the innermost enclosing definition (``""`` at module level)."""
    chain: tuple[str, ...]
    kind: RefKind


@dataclass(frozen=True, slots=True)
class Scope:
    """A function's or class's own bindings, which shadow the module's names inside it."""

    locals: frozenset[str] = frozenset()
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    types: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Local name -> chain of the class it holds an instance of (``x = Client()``, ``x: Client``)."""


@dataclass(frozen=True, slots=True)
class FileFacts:
    """Everything the index keeps about one file."""

    path: str
    revision: str
    language: Language
    module: str
    """The dotted module name the file is imported as (``pkg.sub.mod``)."""
    definitions: tuple[Definition, ...]
    references: tuple[Reference, ...]
    imports: dict[str, tuple[str, str | None]]
    """Module-level name -> (module, name in it; ``None`` for ``import m``)."""
    star_imports: tuple[str, ...] = ()
    exported: tuple[str, ...] | None = None
    """A literal ``__all__``, when the module has one."""
    bases: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)
    """Class qualname -> its base classes' chains."""
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Module- or class-level ``Y = X`` (qualname -> chain of ``X``): ``Y`` means what ``X`` means."""
    scopes: dict[str, Scope] = field(default_factory=dict)
    error: str = ""
    """Why the file could not be parsed (its facts are then empty)."""

    def definition(self, qualname: str) -> Definition | None:
        for found in self.definitions:
            if found.qualname == qualname:
                return found
        return None

    def enclosing(self, line: int) -> Definition | None:
        """The innermost function or class whose lines hold ``line``."""
        best: Definition | None = None
        for found in self.definitions:
            if found.kind in ("variable", "attribute") or not found.line <= line <= found.end_line:
                continue
            if best is None or found.line >= best.line:
                best = found
        return best

    def names(self) -> set[str]:
        """Every name this file defines or uses: the keys it is found under in the index."""
        found = {d.name for d in self.definitions}
        found.update(r.chain[-1] for r in self.references)
        return found


def dump_facts(facts: FileFacts) -> bytes:
    scopes = {k: (sorted(s.locals), s.imports, s.types) for k, s in facts.scopes.items()}
    record = (
        FACTS_VERSION,
        facts.path,
        facts.revision,
        facts.language,
        facts.module,
        [(d.qualname, d.kind, d.line, d.end_line) for d in facts.definitions],
        [(r.line, r.col, r.scope, r.chain, r.kind) for r in facts.references],
        facts.imports,
        facts.star_imports,
        facts.exported,
        facts.bases,
        facts.aliases,
        scopes,
        facts.error,
    )
    return marshal.dumps(record)


def load_facts(blob: bytes) -> FileFacts | None:
    """Facts from a cached blob, or ``None`` when it was written by another extractor version."""
    try:
        record = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(record, tuple) or not record or record[0] != FACTS_VERSION:
        return None
    _, path, revision, language, module, defs, refs, imports, stars, exported, bases, aliases, scopes, error = record
    return FileFacts(
        path,
        revision,
        language,
        module,
        tuple(Definition(*d) for d in defs),
        tuple(Reference(*r) for r in refs),
        imports,
        stars,
        exported,
        bases,
        aliases,
        {k: Scope(frozenset(v[0]), v[1], v[2]) for k, v in scopes.items()},
        error,
    )
