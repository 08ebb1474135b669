"""Candidate edits from small, general edit operators at a function's lines: cheap to make.

Each operator changes one part of one line and knows nothing of any bug: a literal becomes
another (a number +-1, a digit string +-1, another literal of the same kind from the function or
its module), a comparison, arithmetic or boolean operator another, a ``not`` is removed or
added, a name becomes another name of the same function, an attribute another attribute the
function reads, a called builtin another one the module calls, a call is unwrapped or a value
wrapped in a builtin the module calls, two elements of a tuple or of a call's arguments swap.
Every candidate carries a prior (how often a change of that kind is the fix of a one-line bug,
judged in general); the search orders them by that prior and by the line's rank. The harness
only changes lines this way; whether a change fixes anything the checks decide.
"""

from __future__ import annotations

import ast
import contextlib
import io
import itertools
import re
import tokenize
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from protoagent.repair.candidates import CandidateEdit
from protoagent.repair.localize import SourceFunction

MAX_POOL = 12
"""Other literals (or names) of one kind a part may become, at most (the function's first)."""
MAX_PER_LINE = 40

COMPARISONS = ("<", ">", "<=", ">=", "==", "!=")
MIRROR = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "!=", "!=": "=="}
NEGATION = {"<": ">=", ">": "<=", "<=": ">", ">=": "<", "==": "!=", "!=": "=="}
ARITHMETIC = {"+": ("-",), "-": ("+",), "*": ("/", "//"), "/": ("*", "//"), "//": ("/", "%"), "%": ("//",)}
AUGMENTED = {"+=": ("-=",), "-=": ("+=",), "*=": ("/=",), "/=": ("*=",)}
WRAPPERS = ("abs", "len", "str", "int", "float", "reversed", "sorted", "list", "tuple")
"""Builtins a value may be wrapped in, when the module calls them (and unwrapped from)."""
NUMBERS = frozenset({"int", "float"})
SIZED = frozenset({"str", "list", "tuple", "dict", "set", "frozenset", "bytes", "deque"})
TAKES = {"abs": NUMBERS, "int": NUMBERS | {"str"}, "float": NUMBERS | {"str"}, "len": SIZED}
"""The types (as the trace names them) a wrapper takes; the others take a sized value or anything."""

Types = Mapping[str, str]
"""Local name -> its type's name when the line ran (``repair.trace``)."""


@dataclass(frozen=True, slots=True)
class Scored:
    """One candidate edit and its prior."""

    edit: CandidateEdit
    prior: float
    kind: str
    """The operator's name (pairs apply the same operator to two lines)."""


@dataclass(frozen=True, slots=True)
class Part:
    """One token of a line (or a literal piece of an f-string), with its columns."""

    kind: str
    """``number``, ``string``, ``fpiece``, ``name``, ``attr``, ``method``, ``call``, ``op`` or ``keyword``."""
    start: int
    end: int
    text: str


@dataclass(frozen=True, slots=True)
class Pools:
    """What a part may become: the function's literals and names, the module's calls."""

    numbers: tuple[str, ...]
    module_numbers: tuple[str, ...]
    strings: tuple[str, ...]
    module_strings: tuple[str, ...]
    fpieces: tuple[str, ...]
    names: tuple[str, ...]
    attrs: tuple[str, ...]
    methods: tuple[str, ...]
    calls: frozenset[str]


def pools(function: SourceFunction, module_text: str) -> Pools:
    """The pools for ``function`` (its own parts first, then the module's literals)."""
    own = [p for text in function.lines for p in parts(text)]
    module = [p for text in module_text.splitlines() for p in parts(text)]

    def pick(kind: str, source: list[Part]) -> tuple[str, ...]:
        short = [t for t in dict.fromkeys(p.text for p in source if p.kind == kind) if len(t) <= 24]
        return tuple(short[:MAX_POOL])

    strings = pick("string", own)
    module_strings = tuple(t for t in pick("string", module) if t not in strings)
    numbers = pick("number", own)
    module_numbers = tuple(t for t in pick("number", module) if t not in numbers)
    names = _function_names(function)
    calls = frozenset(p.text for p in module if p.kind == "call")
    return Pools(
        numbers,
        module_numbers,
        strings,
        module_strings,
        pick("fpiece", own),
        names,
        pick("attr", own),
        pick("method", own),
        calls,
    )


def line_candidates(function: SourceFunction, line: int, pool: Pools, types: Types | None = None) -> list[Scored]:
    """Every operator's edits of ``line`` of ``function``, best prior first, without repeats.
    ``types`` (the locals when the line ran) narrows names to those in scope and of one type."""
    old = function.line(line)
    found: dict[str, Scored] = {}
    for new, prior, kind in _variants(old, pool, types):
        if new != old and new.strip() and new not in found:
            found[new] = Scored(CandidateEdit(function.path, line, old, new), prior, kind)
    return sorted(found.values(), key=lambda s: -s.prior)[:MAX_PER_LINE]


def _variants(old: str, pool: Pools, types: Types | None) -> Iterator[tuple[str, float, str]]:
    line_parts = parts(old)
    targets = _target_count(line_parts)
    for index, part in enumerate(line_parts):
        if index < targets and part.kind in ("name", "attr"):
            continue  # an assignment's target stays: the value is what a fix changes
        for text, prior, kind in _part_variants(part, line_parts, index, pool, types):
            yield old[: part.start] + text + old[part.end :], prior, kind
    yield from _not_variants(old)
    yield from _ast_variants(old, pool, types)


def _target_count(line: list[Part]) -> int:
    """How many parts stand before the line's assignment ``=`` (0 when it assigns nothing)."""
    depth = 0
    for index, part in enumerate(line):
        if part.kind == "op" and part.text in "([{":
            depth += 1
        elif part.kind == "op" and part.text in ")]}":
            depth -= 1
        elif part.kind == "op" and depth == 0 and (part.text == "=" or part.text in AUGMENTED):
            return index
        elif part.kind == "keyword" and part.text in ("if", "elif", "while", "return", "lambda"):
            return 0
    return 0


def _names_like(name: str, pool: Pools, types: Types | None) -> list[str]:
    """Names ``name`` may become: with a trace, the locals of its type in scope; else the function's."""
    if types is None:
        return [n for n in pool.names if n != name]
    kind = types.get(name)
    if kind is None:
        return []  # not a local where the line ran (a lambda's or a comprehension's own name)
    return [n for n, t in types.items() if n != name and _alike(t, kind) and not n.startswith("__")]


def _alike(kind: str, other: str) -> bool:
    """Types a name may stand in for each other with: the same, or two numbers."""
    return kind == other or (kind in NUMBERS and other in NUMBERS)


def _part_variants(
    part: Part, line: list[Part], index: int, pool: Pools, types: Types | None
) -> Iterator[tuple[str, float, str]]:
    if part.kind in ("op", "keyword"):
        yield from _operator_variants(part, line, index)
    else:
        yield from _word_variants(part, pool, types)


def _operator_variants(part: Part, line: list[Part], index: int) -> Iterator[tuple[str, float, str]]:
    """Another comparison, arithmetic or boolean operator; ``is not``, ``not in``."""
    text = part.text
    if part.kind == "op" and text in COMPARISONS:
        yield MIRROR[text], 3.0, "compare"
        yield NEGATION[text], 2.6, "compare"
        for other in COMPARISONS:
            if other not in (text, MIRROR[text], NEGATION[text]):
                yield other, 1.8, "compare"
    elif part.kind == "op" and text in ARITHMETIC:
        for other in ARITHMETIC[text]:
            yield other, 2.2, "arithmetic"
    elif part.kind == "op" and text in AUGMENTED:
        for other in AUGMENTED[text]:
            yield other, 2.2, "arithmetic"
    elif part.kind == "keyword" and text in ("and", "or"):
        yield ("or" if text == "and" else "and"), 2.2, "boolean"
    elif part.kind == "keyword" and text == "is" and index + 1 < len(line) and line[index + 1].text != "not":
        yield "is not", 2.4, "compare"
    elif part.kind == "keyword" and text == "in" and index > 0 and line[index - 1].text != "not":
        yield "not in", 2.0, "compare"


def _word_variants(part: Part, pool: Pools, types: Types | None) -> Iterator[tuple[str, float, str]]:
    """Another literal, name, attribute or builtin in place of ``part``."""
    text = part.text
    if part.kind == "number":
        yield from _number_variants(text, pool)
    elif part.kind == "string":
        yield from _string_variants(text, pool)
    elif part.kind == "fpiece":
        for other in pool.fpieces:
            if other != text:
                yield other, 1.6, "literal"
    elif part.kind == "name" and (text in pool.names or (types is not None and text in types)):
        for other in _names_like(text, pool, types):
            yield other, 1.6, "name"
        if types is None or types.get(text) == "int":
            yield f"{text} - 1", 1.3, "plus-one"
            yield f"{text} + 1", 1.2, "plus-one"
    elif part.kind in ("attr", "method"):
        for other in pool.attrs if part.kind == "attr" else pool.methods:
            if other != text:
                yield other, 1.4, "attribute"
    elif part.kind == "call" and text in WRAPPERS:
        for other in WRAPPERS:
            if other != text and other in pool.calls:
                yield other, 1.4, "call"


def _number_variants(text: str, pool: Pools) -> Iterator[tuple[str, float, str]]:
    value = _number(text)
    if isinstance(value, int):
        for near in (value - 1, value + 1):
            yield str(near), 2.4, "number"
    for numbers, prior in ((pool.numbers, 1.5), (pool.module_numbers, 0.7)):
        for number in numbers:
            if number != text:
                yield number, prior, "literal"


def _string_variants(text: str, pool: Pools) -> Iterator[tuple[str, float, str]]:
    value = _literal(text)
    if not isinstance(value, str) or text[:1] not in "'\"":
        return
    quote = text[0]
    if value.isdigit() and len(value) <= 4:
        for digit in (int(value) - 1, int(value) + 1):
            if digit >= 0:
                yield f"{quote}{str(digit).zfill(len(value))}{quote}", 2.4, "literal"
    for others, prior in ((pool.strings, 1.5), (pool.module_strings, 0.7)):
        for other in sorted(others, key=lambda o: abs(len(o) - len(text))):  # a literal of the same shape first
            other_value = _literal(other)
            if isinstance(other_value, str) and other_value != value and other[:1] in "'\"":
                yield _quoted(other_value, quote), prior, "literal"


def _quoted(value: str, quote: str) -> str:
    text = repr(value)
    return f"{quote}{text[1:-1]}{quote}" if quote not in value and "\\" not in text else text


_HEADER = re.compile(r"^(?P<indent>\s*)(?P<key>if|elif|while|return|assert)\s+(?P<rest>.*?)(?P<end>:?)\s*$")


def _not_variants(old: str) -> Iterator[tuple[str, float, str]]:
    """Remove a leading ``not`` from a condition or returned value, or add one."""
    match = _HEADER.match(old)
    if match is None or (match["key"] == "return" and match["end"]) or (match["key"] != "return" and not match["end"]):
        return
    rest = match["rest"]
    head = f"{match['indent']}{match['key']} "
    if match["key"] == "return" and not _truth_valued(rest):
        return
    if rest.startswith("not "):
        yield f"{head}{rest[4:].strip()}{match['end']}", 2.6, "not"
    elif rest:
        wrapped = f"({rest})" if _needs_parens(rest) else rest
        yield f"{head}not {wrapped}{match['end']}", 2.0, "not"


def _truth_valued(expression: str) -> bool:
    """A returned expression that may be a truth value (a comparison, a name, a call ...)."""
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return False
    return isinstance(tree, ast.Compare | ast.BoolOp | ast.UnaryOp | ast.Name | ast.Attribute | ast.Call)


def _needs_parens(expression: str) -> bool:
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError:
        return True
    return isinstance(tree, ast.BoolOp | ast.IfExp | ast.Lambda | ast.NamedExpr)


def _ast_variants(old: str, pool: Pools, types: Types | None) -> Iterator[tuple[str, float, str]]:
    """Swapped elements of a tuple or a call's arguments; a builtin call unwrapped, a value wrapped."""
    parsed = _statement(old)
    if parsed is None:
        return
    tree, offset = parsed

    def span(node: ast.expr) -> tuple[int, int] | None:
        if node.lineno != 1 or node.end_lineno != 1 or node.end_col_offset is None:
            return None
        return node.col_offset + offset, node.end_col_offset + offset

    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    stored = {id(t) for n in ast.walk(tree) if isinstance(n, ast.Assign | ast.AugAssign) for t in _targets(n)}
    for node in ast.walk(tree):
        items = node.elts if isinstance(node, ast.Tuple) else node.args if isinstance(node, ast.Call) else []
        spans = [span(e) for e in items if not isinstance(e, ast.Starred)]
        if len(spans) == len(items) and 2 <= len(items) <= 4 and all(spans):
            for (a, b), (c, d) in itertools.pairwise(spans):  # type: ignore[misc]
                yield old[:a] + old[c:d] + old[b:c] + old[a:b] + old[d:], 1.8, "swap"
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WRAPPERS:
            outer, inner = span(node), span(node.args[0]) if len(node.args) == 1 else None
            if outer and inner:
                yield old[: outer[0]] + old[inner[0] : inner[1]] + old[outer[1] :], 1.2, "unwrap"
        if isinstance(node, ast.Name | ast.Attribute) and isinstance(node.ctx, ast.Load) and id(node) not in called:
            where = span(node)
            if where is None or id(node) in stored:
                continue
            kind = types.get(node.id) if types is not None and isinstance(node, ast.Name) else None
            for wrapper in WRAPPERS:
                if wrapper in pool.calls and _takes(wrapper, kind):
                    value = old[where[0] : where[1]]
                    yield old[: where[0]] + f"{wrapper}({value})" + old[where[1] :], 1.1, "wrap"


def _takes(wrapper: str, kind: str | None) -> bool:
    """Whether a value of type ``kind`` (``None``: unknown) may be wrapped in ``wrapper``."""
    if kind is None:
        return True
    if wrapper in TAKES:
        return kind in TAKES[wrapper]
    if wrapper == "str":
        return kind != "str"
    return kind in SIZED


def _targets(node: ast.Assign | ast.AugAssign) -> list[ast.expr]:
    return list(node.targets) if isinstance(node, ast.Assign) else [node.target]


def _statement(old: str) -> tuple[ast.Module, int] | None:
    """The line parsed alone, and the column offset from the parsed text to the line."""
    stripped = old.strip()
    offset = len(old) - len(old.lstrip())
    text = stripped
    if stripped.startswith("elif "):
        text, offset = stripped[2:], offset + 2
    if text.endswith(":"):
        text += " pass"
    try:
        return ast.parse(text), offset
    except SyntaxError:
        return None


def parts(text: str) -> list[Part]:
    """The line's tokens as parts; f-strings split into their literal pieces and inner tokens."""
    found: list[Part] = []
    previous = ""
    tokens: list[tokenize.TokenInfo] = []
    with contextlib.suppress(tokenize.TokenError, SyntaxError, IndentationError):
        tokens.extend(tokenize.generate_tokens(io.StringIO(text.strip() + "\n").readline))
    shift = len(text) - len(text.lstrip())
    for position, token in enumerate(tokens):
        start, end = token.start[1] + shift, token.end[1] + shift
        if token.start[0] != 1 or token.end[0] != 1:
            continue
        following = tokens[position + 1].string if position + 1 < len(tokens) else ""
        if token.type == tokenize.NUMBER:
            found.append(Part("number", start, end, token.string))
        elif token.type == tokenize.STRING:
            found.extend(_string_parts(token.string, start))
        elif token.type == tokenize.NAME:
            kind = "keyword" if token.string in _KEYWORDS else "attr" if previous == "." else "name"
            if kind in ("name", "attr") and following == "(":
                kind = "call" if kind == "name" else "method"
            if kind == "name" and following == "=" and _inside_call(tokens, position):
                kind = "keyword"  # a keyword argument's name
            found.append(Part(kind, start, end, token.string))
        elif token.type == tokenize.OP:
            found.append(Part("op", start, end, token.string))
        previous = token.string
    return found


def _inside_call(tokens: list[tokenize.TokenInfo], position: int) -> bool:
    depth = 0
    for token in reversed(tokens[:position]):
        if token.string in ")]}":
            depth += 1
        elif token.string in "([{":
            if depth == 0:
                return token.string == "("
            depth -= 1
    return False


_KEYWORDS = frozenset(
    "and or not is in if elif else for while return def class lambda None True False try except "
    "finally with as yield raise pass break continue import from global nonlocal assert del await async".split()
)
_FSTRING = re.compile(r"^(?P<prefix>[rRbBuU]*[fF][rRbBuU]*)(?P<quote>'''|\"\"\"|'|\")")


def _string_parts(token: str, start: int) -> list[Part]:
    """A plain string literal as one part; an f-string as its literal pieces and inner names."""
    match = _FSTRING.match(token)
    if match is None:
        return [Part("string", start, start + len(token), token)]
    body_start = match.end()
    body_end = len(token) - len(match["quote"])
    found: list[Part] = []
    index, piece = body_start, body_start
    while index < body_end:
        char = token[index]
        if char in "{}" and token[index : index + 2] in ("{{", "}}"):
            index += 2
            continue
        if char == "{":
            if index > piece:
                found.append(Part("fpiece", start + piece, start + index, token[piece:index]))
            close = _closing(token, index, body_end)
            inner = token[index + 1 : close]
            cut = re.split(r"[!:](?![=])", inner, maxsplit=1)[0] if "!=" not in inner else inner
            found.extend(
                Part(p.kind, p.start + start + index + 1, p.end + start + index + 1, p.text)
                for p in parts(cut)
                if p.start >= 0
            )
            index = piece = close + 1
            continue
        index += 1
    if body_end > piece:
        found.append(Part("fpiece", start + piece, start + body_end, token[piece:body_end]))
    return found


def _closing(token: str, index: int, end: int) -> int:
    depth = 0
    for position in range(index, end):
        if token[position] == "{":
            depth += 1
        elif token[position] == "}":
            depth -= 1
            if depth == 0:
                return position
    return end


def _function_names(function: SourceFunction) -> tuple[str, ...]:
    """Parameters and the names the function assigns (the names of the same function)."""
    text = "\n".join(function.lines)
    try:
        tree = ast.parse(_dedented(text))
    except SyntaxError:  # a window of a long function: the names it reads stand in
        return tuple(dict.fromkeys(p.text for line in function.lines for p in parts(line) if p.kind == "name"))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            found.append(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.append(node.id)
    return tuple(dict.fromkeys(n for n in found if n not in ("self", "cls")))


def _dedented(text: str) -> str:
    lines = text.splitlines()
    indent = min((len(t) - len(t.lstrip()) for t in lines if t.strip()), default=0)
    return "\n".join(t[indent:] for t in lines)


def _number(text: str) -> int | float | None:
    value = _literal(text)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
