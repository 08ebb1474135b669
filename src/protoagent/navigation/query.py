"""The structural operations on an exact symbol: definition, references, callers, callees, outline."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from protoagent.errors import ToolRejected
from protoagent.navigation.facts import FileFacts, Reference
from protoagent.navigation.index import SymbolIndex
from protoagent.navigation.symbols import nearest, rejection, symbol_problem, words_in
from protoagent.workspace.files import read_bytes, revision_of
from protoagent.workspace.paths import open_root
from protoagent.workspace.text import decode_source, render_span

Operation = Literal["definition", "references", "callers", "callees", "outline"]
MAX_RESULTS = 40
MAX_UNRESOLVED_SHOWN = 8
MAX_SOURCES_SHOWN = 3
"""A definition answer with at most this many results shows each one's source lines."""
MAX_SOURCE_LINES = 40
"""Lines of a long definition shown (its first line and the start of its body); the rest is counted."""
MAX_WHOLE_LINES = 80
"""A definition of at most this many lines is shown whole (a long docstring would otherwise use up
the first ``MAX_SOURCE_LINES`` and hide the body), within ``MAX_SOURCE_CHARS``."""
MAX_SOURCE_CHARS = 4000


@dataclass(frozen=True, slots=True)
class Hit:
    """One result: where, which symbol, what kind, inside which definition, the file's revision."""

    path: str
    line: int
    symbol: str
    kind: str
    enclosing: str
    revision: str
    end_line: int | None = None
    """For definitions and outlines: the last line of the definition."""
    via: str = ""
    """For callees: the call site (``path:line``) in the queried function."""

    def to_json(self) -> dict[str, object]:
        return {k: v for k, v in asdict(self).items() if v not in (None, "")}


@dataclass(slots=True)
class Answer:
    operation: Operation
    symbol: str
    matched: list[str]
    """Full names of the definitions the symbol matched."""
    results: list[Hit] = field(default_factory=list)
    total: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _Match:
    path: str
    qualname: str
    kind: str
    line: int
    end_line: int
    full: str


def ask(
    index: SymbolIndex, operation: Operation, symbol: str, under: str | None = None, limit: int = MAX_RESULTS
) -> Answer:
    """Answer one operation on ``symbol`` (optionally only in files under ``under``)."""
    problem = symbol_problem(symbol)
    if problem is not None:
        raise rejection(symbol, problem, _candidates_for_words(index, symbol))
    matches = _matches(index, symbol, under)
    if not matches:
        raise rejection(symbol, "unknown", _candidates(index, symbol))
    answer = Answer(operation, symbol, [m.full for m in matches])
    hits = list(_OPERATIONS[operation](index, matches, answer))
    if under:
        hits = [h for h in hits if _inside(h.path, under)]
    unique = list({(h.path, h.line, h.symbol, h.via): h for h in hits}.values())
    answer.total = len(unique)
    answer.results = unique[:limit]
    if len(matches) > 1:
        shown = ", ".join(m.full for m in matches[:MAX_UNRESOLVED_SHOWN])
        answer.notes.append(f"{symbol!r} matches {len(matches)} definitions ({shown}); qualify it to narrow")
    if answer.total > limit:
        answer.notes.append(_more_note(operation, matches, unique, limit, under))
    return answer


def definition_source(root: Path, hit: Hit, *, numbered: bool = True) -> str | None:
    """A definition's first lines as ``read_file`` shows them, under its header with the file's
    full revision, and a marker counting the definition's lines left out; ``None`` when the file
    no longer has the indexed revision or cannot be read."""
    shown = definition_read(root, hit, numbered=numbered)
    return None if shown is None else render_definition(hit, shown)


def render_definition(hit: Hit, shown: dict[str, Any]) -> str:
    """``shown`` (a ``definition_read``) as ``read_file`` shows lines, with the marker."""
    lines = f"{shown['start_line']}-{shown['end_line']} of {shown['total_lines']}"
    header = f"{hit.path} lines {lines}; revision {shown['revision']}"
    content = str(shown["content"])
    end = hit.end_line or hit.line
    left = end - int(shown["end_line"])
    if left > 0:
        noun = "line" if left == 1 else "lines"
        content += (
            f"[... {left} more {noun} of {hit.symbol} not shown (to line {end}): "
            f"read_file start_line={int(shown['end_line']) + 1} ...]\n"
        )
    return header + "\n" + content


def definition_read(root: Path, hit: Hit, *, numbered: bool = True) -> dict[str, Any] | None:
    """The lines ``definition_source`` shows, as a ``read_file`` result records them (path,
    revision, content, start and end line, total lines), so a reader of the log can treat them
    as read; ``None`` when the file no longer has the indexed revision or cannot be read."""
    try:
        with open_root(root) as root_fd:
            data = read_bytes(root_fd, hit.path)
        text = decode_source(data, hit.path)
    except (OSError, ToolRejected):
        return None
    revision = revision_of(data)
    if revision != hit.revision:
        return None
    end = hit.end_line or hit.line
    last = end if end - hit.line < MAX_WHOLE_LINES else hit.line + MAX_SOURCE_LINES - 1
    try:
        span = render_span(text, hit.line, last, numbered=numbered, cap=MAX_SOURCE_CHARS)
    except ToolRejected:
        return None
    content = span.content if span.content.endswith("\n") or not span.content else span.content + "\n"
    return {
        "path": hit.path,
        "revision": revision,
        "content": content,
        "start_line": span.start_line,
        "end_line": span.end_line,
        "total_lines": span.total_lines,
    }


def _more_note(operation: Operation, matches: list[_Match], hits: list[Hit], limit: int, under: str | None) -> str:
    """How many results were left out, where the first of them is, and only the narrowing this
    call has not already done: qualify an ambiguous symbol, pass a path (a narrower one when a
    folder was passed), outline the class whose members were cut."""
    first = hits[limit]
    advice = [f"the next is {first.symbol} at {first.path}:{first.line} (read_file from there)"]
    if operation == "outline" and first.enclosing not in {m.full for m in matches}:
        advice.append(f"outline {first.enclosing} for its members")
    if len(matches) > 1:
        advice.append("qualify the symbol")
    if not under:
        advice.append("pass path")
    elif not all(h.path == under.strip("/") for h in hits):
        advice.append("pass a narrower path")
    return f"{len(hits) - limit} more results not shown; " + "; ".join(advice)


def _inside(path: str, under: str) -> bool:
    under = under.strip("/")
    return not under or under == "." or path == under or path.startswith(under + "/")


def _matches(index: SymbolIndex, symbol: str, under: str | None) -> list[_Match]:
    last = symbol.rpartition(".")[2]
    found: list[_Match] = []
    for path, qualname, kind, line, end_line in index.definitions_named(last):
        module = index.module_of(path)
        full = f"{module}.{qualname}" if qualname else module
        if full == symbol or full.endswith("." + symbol) or qualname == symbol:
            found.append(_Match(path, qualname, kind, line, end_line, full))
    if under:
        narrowed = [m for m in found if _inside(m.path, under)]
        found = narrowed or found
    defined = [m for m in found if m.kind != "module"]
    return defined if defined and len(defined) < len(found) and "." not in symbol else found


def _candidates(index: SymbolIndex, symbol: str) -> list[str]:
    last = symbol.rpartition(".")[2]
    same_name = index.definitions_named(last)
    if same_name:  # the name exists under another owner: offer the qualified names
        return [f"{index.module_of(p)}.{q}" if q else index.module_of(p) for p, q, *_ in same_name][:5]
    return nearest(last, index.all_names())


def _candidates_for_words(index: SymbolIndex, text: str) -> list[str]:
    """Known symbols among the words of a prose or regex request, else the nearest to its words."""
    module = index.module_of(text.strip().lstrip("./"))
    if module:  # a file's path where its module's name belongs (outline of a file)
        return [module]
    words = [w for w in words_in(text) if len(w) > 2]
    exact = [w for w in words if index.definitions_named(w.rpartition(".")[2])]
    if exact:
        return exact[:5]
    known = index.all_names()
    out: list[str] = []
    for word in words[:4]:
        out.extend(nearest(word.rpartition(".")[2], known, 3))
    return list(dict.fromkeys(out))[:5]


def _revision(index: SymbolIndex, path: str) -> str:
    facts = index.facts(path)
    return facts.revision if facts is not None else ""


def _enclosing_name(facts: FileFacts, line: int) -> str:
    found = facts.enclosing(line)
    return f"{facts.module}.{found.qualname}" if found is not None else facts.module


def _definition(index: SymbolIndex, matches: list[_Match], answer: Answer) -> Iterator[Hit]:
    for m in matches:
        parent = m.qualname.rpartition(".")[0]
        enclosing = f"{index.module_of(m.path)}.{parent}" if parent else index.module_of(m.path)
        yield Hit(m.path, m.line, m.full, m.kind, enclosing, _revision(index, m.path), m.end_line)


def _references(index: SymbolIndex, matches: list[_Match], answer: Answer) -> Iterator[Hit]:
    for facts, ref, meant in _uses(index, matches, answer):
        yield Hit(facts.path, ref.line, meant, ref.kind, _enclosing_name(facts, ref.line), facts.revision)


def _callers(index: SymbolIndex, matches: list[_Match], answer: Answer) -> Iterator[Hit]:
    for facts, ref, _ in _uses(index, matches, answer):
        if ref.kind != "call":
            continue
        caller = facts.enclosing(ref.line)
        name = f"{facts.module}.{caller.qualname}" if caller is not None else facts.module
        kind = caller.kind if caller is not None else "module"
        yield Hit(facts.path, ref.line, name, kind, name, facts.revision)


def _uses(index: SymbolIndex, matches: list[_Match], answer: Answer) -> Iterator[tuple[FileFacts, Reference, str]]:
    """Every reference that resolves to one of ``matches`` (Python), or names it (JS/TS), with
    the full name of the definition it means."""
    targets = {(m.path, m.qualname): m.full for m in matches}
    keys = {m.qualname.rpartition(".")[2] or m.full.rpartition(".")[2] for m in matches}
    python = any(m.path.endswith(".py") for m in matches)
    if any(not m.path.endswith(".py") for m in matches):
        answer.notes.append("JavaScript/TypeScript references are found by name, not resolved through imports")
    files: dict[str, set[str]] = {}
    for key in keys:
        for path in index.files_using(key):
            files.setdefault(path, set()).add(key)
    members = any("." in m.qualname for m in matches)
    untyped: list[str] = []
    for path in sorted(files):
        facts = index.facts(path)
        if facts is None:
            continue
        names = files[path] | _aliases_of(facts, files[path])
        for ref in facts.references:
            if ref.chain[-1].rpartition(".")[2] not in names:
                continue
            if facts.language != "python":
                if not python and ref.chain[-1] in keys:
                    yield facts, ref, ref.chain[-1]
                continue
            target = index.resolver.resolve(facts, ref.scope, ref.chain)
            if target is not None and not target.instance and (target.path, target.qualname) in targets:
                yield facts, ref, targets[(target.path, target.qualname)]
            elif target is None and members and len(ref.chain) > 1 and ref.chain[-1] in keys:
                if index.resolver.resolve(facts, ref.scope, ref.chain[:-1]) is None:
                    untyped.append(f"{facts.path}:{ref.line}")
    if untyped:
        shown = ", ".join(untyped[:MAX_UNRESOLVED_SHOWN])
        more = f" and {len(untyped) - MAX_UNRESOLVED_SHOWN} more" if len(untyped) > MAX_UNRESOLVED_SHOWN else ""
        uses = f"{len(untyped)} use{'s' if len(untyped) > 1 else ''} of .{sorted(keys)[0]}"
        answer.notes.append(
            f"{uses} on values whose type the files do not show are not counted "
            f"(they may be this symbol or another): {shown}{more}"
        )


def _aliases_of(facts: FileFacts, names: set[str]) -> set[str]:
    """Local names that stand for ``names`` in this file: ``import X as Y``, ``Y = X``."""
    found = {local for local, (_, original) in facts.imports.items() if original in names}
    for scope in facts.scopes.values():
        found.update(local for local, (_, original) in scope.imports.items() if original in names)
    found.update(q.rpartition(".")[2] for q, chain in facts.aliases.items() if chain[-1] in names)
    return found


def _callees(index: SymbolIndex, matches: list[_Match], answer: Answer) -> Iterator[Hit]:
    unresolved: list[str] = []
    for m in matches:
        facts = index.facts(m.path)
        if facts is None or not m.qualname:
            continue
        inside = [
            r
            for r in facts.references
            if r.kind == "call" and (r.scope == m.qualname or r.scope.startswith(m.qualname + "."))
        ]
        for ref in inside:
            hit = _callee(index, facts, ref, m.full)
            if hit is None:
                unresolved.append(".".join(ref.chain))
            else:
                yield hit
    if unresolved:
        names = list(dict.fromkeys(unresolved))
        more = f" and {len(names) - MAX_UNRESOLVED_SHOWN} more" if len(names) > MAX_UNRESOLVED_SHOWN else ""
        shown = ", ".join(names[:MAX_UNRESOLVED_SHOWN])
        answer.notes.append(
            f"calls not resolved to repository source (builtins, libraries, unknown types): {shown}{more}"
        )


def _callee(index: SymbolIndex, facts: FileFacts, ref: Reference, caller: str) -> Hit | None:
    if facts.language != "python":
        return None
    target = index.resolver.resolve(facts, ref.scope, ref.chain)
    if target is None or not target.qualname:
        return None
    owner = index.facts(target.path)
    found = owner.definition(target.qualname) if owner is not None else None
    if owner is None or found is None:
        return None
    full = f"{owner.module}.{found.qualname}"
    via = f"{facts.path}:{ref.line}"
    return Hit(owner.path, found.line, full, found.kind, caller, owner.revision, found.end_line, via)


def _outline(index: SymbolIndex, matches: list[_Match], answer: Answer) -> Iterator[Hit]:
    for m in matches:
        facts = index.facts(m.path)
        if facts is None:
            continue
        if m.kind == "module":
            members = [d for d in facts.definitions if d.qualname.count(".") == 0 or _is_member(facts, d.qualname)]
        else:
            depth = m.qualname.count(".") + 1
            prefix = m.qualname + "."
            members = [d for d in facts.definitions if d.qualname.startswith(prefix) and d.qualname.count(".") == depth]
        for d in members:
            parent = d.qualname.rpartition(".")[0]
            enclosing = f"{facts.module}.{parent}" if parent else facts.module
            yield Hit(facts.path, d.line, f"{facts.module}.{d.qualname}", d.kind, enclosing, facts.revision, d.end_line)


def _is_member(facts: FileFacts, qualname: str) -> bool:
    """A method or nested class of a top-level class: the second level of a file's outline."""
    owner, _, _ = qualname.rpartition(".")
    if "." in owner:
        return False
    found = facts.definition(owner)
    return found is not None and found.kind == "class"


_OPERATIONS = {
    "definition": _definition,
    "references": _references,
    "callers": _callers,
    "callees": _callees,
    "outline": _outline,
}
