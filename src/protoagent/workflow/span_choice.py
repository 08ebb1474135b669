"""Which of the lines its lead read a worker's assignment carries, and how one budget is shared.

An assignment names a span when it names a function or class the span defines, or the span's
file and one of its lines ("line 50"), or the span's file alone (then every span of that file,
unless the assignment names one of them as above); an assignment that names none of them
carries them all, since its lead left the choice to the worker. A line reference belongs to the
file named last before it ("1. app.py: line 12 ... 2. test_app.py: line 40"), or when none is,
to the first named after it ("line 50 of app.py").

Of a long span the assignment points into, only the windows it points at travel: each named
line range from the definition that holds it (when that starts at most ``FOCUS_LOOKBACK`` lines
above) or from ``CONTEXT_LINES`` above, to ``CONTEXT_LINES`` below; and each definition it names
as code (`` `parse` ``, ``parse(``, ``parse_date``, a module-level ``__all__``) and defined once there
whole (a class too long
for that is left out: its head is a docstring), and with them a Python module's import
lines when the assignment speaks of imports ("import is_valid in the tests"). The budget is then shared so that no
file crowds out another: the smallest pieces are carried whole first, the rest share what is
left evenly, and each cut piece keeps the part the assignment points at. Pieces are shown in the
order the assignment names their files (so the file it is about comes first)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

from protoagent.workflow.source_spans import SourceSpan, SpanBudget, fitted, line_count

CONTEXT_LINES = 6
"""Lines shown on either side of a named line range."""
FOCUS_LOOKBACK = 40
"""Lines above a named line searched for the definition it belongs to."""
WINDOWED_FROM = 60
"""A span shorter than this travels whole: windows would save little and hide the neighbours."""
WHOLE_SHARE = 0.7
"""Windows that would show this much of a span show it whole."""
MAX_DEFINITION_LINES = 120
MAX_IMPORT_LINES = 40
"""How far into a module its import block is looked for."""

_DEFINES = re.compile(r"^(?:\s*\d+\| ?)?(\s*)(?:async\s+def|def|class|function)\s+([A-Za-z_$][\w$]*)", re.M)
"""A definition header in a span's content (read_file may number the lines: ``   4| def f``)."""
_NUMBERED = re.compile(r"^\s*\d+\| ?")
_CLASS = re.compile(r"^(?:\s*\d+\| ?)?\s*class\s")
_MODULE_NAME = re.compile(r"^(?:\s*\d+\| ?)?([A-Za-z_]\w*)\s*(?::[^=\n]*)?=(?!=)")
"""A module-level name bound by assignment (``__all__ = [``, ``TIME_REGEX = re.compile(``)."""
_RANGE = r"\d+(?:\s*(?:-|–|to)\s*\d+)?"
_LINE_REFERENCE = re.compile(rf"\blines?\s+({_RANGE}(?:\s*(?:,|and|&)\s*{_RANGE})*)", re.I)
_NUMBERS = re.compile(r"(\d+)(?:\s*(?:-|–|to)\s*(\d+))?")
_SHORT_REFERENCE = re.compile(r"(?:(?<!\w)L|[\w-]\.[A-Za-z]\w{0,5}:)(\d+)(?:\s*(?:-|–)\s*L?(\d+))?(?!\w)")
"""``L127``, ``L127-132`` and ``app.py:49`` / ``app.py:49-54``."""
_SUFFIXES = (
    "py|pyi|js|jsx|ts|tsx|mjs|cjs|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|sh|"
    "md|rst|txt|toml|cfg|ini|json|yaml|yml|html|css|sql|xml"
)
_FILE_MENTION = re.compile(rf"(?<![\w./-])((?:[\w.-]+/)*[\w-]+(?:\.[\w-]+)*\.(?:{_SUFFIXES}))(?![\w/-])")
"""A file the text names: a path with a source or document suffix (``self.x`` is not one)."""


def named_spans(spans: Sequence[SourceSpan], assignment: str) -> list[SourceSpan]:
    """The spans ``assignment`` names (see the module docstring), in their order; all of them
    when it names none."""
    if not assignment.strip():
        return list(spans)
    by_symbol = [
        s
        for s in spans
        if any(names_word(assignment, h[2]) for h in _DEFINES.finditer(s.content))
        or any(s.start_line <= n <= s.end_line for n in lines_named_in(assignment, s.path))
    ]
    symbol_files = {s.path for s in by_symbol}
    chosen = [s for s in spans if s in by_symbol or (s.path not in symbol_files and names_path(assignment, s.path))]
    return chosen or list(spans)


def carried(spans: Sequence[SourceSpan], assignment: str, budget: SpanBudget) -> list[SourceSpan]:
    """What of ``spans`` (each already named) the assignment carries within ``budget``: their
    windows, shared as the module docstring says, in the order the assignment names them."""
    ordered = sorted(spans, key=lambda s: _first_mention(assignment, s))
    pieces = [w for span in ordered for w in windows(span, assignment)]
    return _shared(pieces, budget, assignment)


def windows(span: SourceSpan, assignment: str) -> list[SourceSpan]:
    """The parts of ``span`` the assignment points at (see the module docstring), in file order;
    the whole span when it is short, points at none of its lines, or would see most of it anyway."""
    lines = span.content.splitlines(keepends=True)
    if len(lines) < WINDOWED_FROM or len(lines) != line_count(span):
        return [span]
    ranges: list[tuple[int, int]] = []
    for first, last in _ranges(lines_named_in(assignment, span.path)):
        if last < span.start_line or first > span.end_line:
            continue
        top, bottom = max(first, span.start_line) - span.start_line, min(last, span.end_line) - span.start_line
        header = _header_above(lines, top)
        ranges.append((header if header is not None else max(0, top - CONTEXT_LINES), bottom + CONTEXT_LINES))
    defined = [(offset, m[2]) for offset, line in enumerate(lines) if (m := _DEFINES.match(line)) is not None]
    defined += [(offset, m[1]) for offset, line in enumerate(lines) if (m := _MODULE_NAME.match(line)) is not None]
    counts = Counter(name for _, name in defined)
    for offset, name in defined:
        if counts[name] == 1 and _names_code(assignment, name):  # a name defined twice points nowhere
            end = _definition_end(lines, offset)
            if end - offset >= MAX_DEFINITION_LINES and _CLASS.match(lines[offset]):
                continue  # a long class's head is its docstring: its methods are what was meant
            ranges.append((_decorated(lines, offset), min(end, offset + MAX_DEFINITION_LINES - 1)))
    if ranges and span.start_line == 1 and span.path.endswith(".py") and _IMPORT_WORD.search(assignment):
        imports = _import_block(lines)
        if imports is not None:  # the assignment speaks of imports: the window where they go
            ranges.append((0, imports))
    merged = _merged(ranges, len(lines) - 1)
    if not merged or sum(b - a + 1 for a, b in merged) >= WHOLE_SHARE * len(lines):
        return [span]
    return [
        replace(span, start_line=span.start_line + a, end_line=span.start_line + b, content="".join(lines[a : b + 1]))
        for a, b in merged
    ]


def focused_on(span: SourceSpan, assignment: str) -> SourceSpan:
    """``span`` from the first line the assignment points at, so a cut keeps the part the worker
    was sent for: a line it names (from the definition that holds it, when that starts at most
    ``FOCUS_LOOKBACK`` lines above), else the definition of a symbol it names, else a few lines
    above the first line that uses a name it writes as code (a README's usage of ``parse_date``);
    the whole span when it points at none of its lines or at the first."""
    named = lines_named_in(assignment, span.path)
    lines = span.content.splitlines(keepends=True)
    inside = [n - span.start_line for n in sorted(named) if span.start_line <= n <= span.end_line]
    start: int | None
    if inside:
        header = _header_above(lines, inside[0])
        start = header if header is not None else inside[0]
    else:
        start = _named_definition(lines, assignment)
    if start is None:  # no definition it names: from a little above the first line using its code
        words = [re.compile(rf"(?<![\w$]){re.escape(n)}(?![\w$])") for n in code_names(assignment)]
        hit = next((o for o, line in enumerate(lines) if any(w.search(line) for w in words)), 0)
        start = max(0, hit - CONTEXT_LINES)
    if start == 0:
        return span
    return replace(span, start_line=span.start_line + start, content="".join(lines[start:]))


_CODE = re.compile(r"`([^`\s]+)`|\b([A-Za-z_][\w]*)\(|\b([A-Za-z]+_[\w]*)\b")


def code_names(text: str) -> set[str]:
    """What ``text`` writes as code: `quoted`, called names and snake_case names."""
    return {next(g for g in m.groups() if g).strip("().") for m in _CODE.finditer(text)} - {""}


def lines_named_in(text: str, path: str) -> set[int]:
    """The line numbers ``text`` refers to ("line 50", "lines 49-54", "lines 49 and 60", "L49-54",
    "app.py:49") that belong to ``path`` (see the module docstring)."""
    mentions = [(m.start(), names_path(m.group(1), path)) for m in _FILE_MENTION.finditer(text)]
    if not any(same for _, same in mentions):
        return set()
    found = [(ref.start(), m) for ref in _LINE_REFERENCE.finditer(text) for m in _NUMBERS.finditer(ref.group(1))]
    found += [(m.start(), m) for m in _SHORT_REFERENCE.finditer(text)]
    named: set[int] = set()
    for at, match in found:
        before = [same for position, same in mentions if position < at]
        after = [same for position, same in mentions if position > at]
        if before[-1] if before else after[0]:
            first = int(match.group(1))
            named.update(range(first, min(int(match.group(2) or first), first + 500) + 1))
    return named


def names_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w$]){re.escape(word)}(?![\w$])", text) is not None


def names_path(text: str, path: str) -> bool:
    """``text`` names the file: its workspace-relative path or its file name (alone or after a
    folder, as in ``pkg/mod.py``), as a whole token."""
    names = {path, path.rsplit("/", 1)[-1]}
    return any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w/-])", text) is not None for n in names)


def _names_code(text: str, name: str) -> bool:
    """``text`` writes ``name`` as code: quoted, called, or a name no prose word is (``parse_date``,
    ``OrderedSet``)."""
    if len(name) < 3 or not names_word(text, name):
        return False
    plain = name.isalpha() and (name.islower() or name[1:].islower())
    called = re.search(rf"(?<![\w$])(?:`{re.escape(name)}`|{re.escape(name)}\(|\.{re.escape(name)})", text)
    return not plain or called is not None


def _first_mention(text: str, span: SourceSpan) -> int:
    """Where ``text`` first names the span's file or a definition in it; past the end when nowhere."""
    return first_named_at(text, span.path, (h[2] for h in _DEFINES.finditer(span.content)))


def first_named_at(text: str, path: str, names: Iterable[str] = ()) -> int:
    """Where ``text`` first names ``path`` (or its file name) or one of ``names``, as a whole
    token; past the end when nowhere."""
    wanted = {path, path.rsplit("/", 1)[-1], *names}
    found = [m.start() for n in wanted for m in re.finditer(rf"(?<![\w$.-]){re.escape(n)}(?![\w$])", text)]
    return min(found, default=len(text) + 1)


def _named_definition(lines: Sequence[str], assignment: str) -> int | None:
    """The first line that defines a name the assignment uses."""
    return next(
        (o for o, line in enumerate(lines) if (h := _DEFINES.match(line)) and names_word(assignment, h[2])), None
    )


def _ranges(numbers: set[int]) -> list[tuple[int, int]]:
    """Consecutive runs of ``numbers``, as first and last."""
    out: list[tuple[int, int]] = []
    for n in sorted(numbers):
        if out and n == out[-1][1] + 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out


_IMPORT = re.compile(r"^(?:\s*\d+\| ?)?(?:import|from)\s+[\w.]+")
_IMPORT_WORD = re.compile(r"\bimport", re.I)


def _import_block(lines: Sequence[str]) -> int | None:
    """The last import line of a Python module's head (before its first definition, within
    ``MAX_IMPORT_LINES``); ``None`` when it imports nothing there."""
    last = None
    open_paren = False
    for offset, line in enumerate(lines[:MAX_IMPORT_LINES]):
        if _DEFINES.match(line):
            break
        if _IMPORT.match(line) or open_paren:  # "from x import (" goes on to its ")"
            last = offset
            open_paren = (open_paren or "(" in line) and ")" not in line
    return last


def _header_above(lines: Sequence[str], offset: int) -> int | None:
    """The nearest definition header at or at most ``FOCUS_LOOKBACK`` lines above ``offset``."""
    for o in range(offset, max(offset - FOCUS_LOOKBACK, 0) - 1, -1):
        if _DEFINES.match(lines[o]):
            return o
    return None


def _definition_end(lines: Sequence[str], header: int) -> int:
    """The last line of the definition whose header is at ``header``: the line before the next
    line indented no deeper than the header (a closing bracket there still belongs to it)."""
    indent = _indent(lines[header])
    end = header
    for o in range(header + 1, len(lines)):
        text = _NUMBERED.sub("", lines[o], count=1)
        if not text.strip():
            continue
        if _indent(lines[o]) <= indent and not text.lstrip().startswith((")", "]", "}")):
            break
        end = o
    return end


def _decorated(lines: Sequence[str], header: int) -> int:
    """The first line of the decorators right above ``header`` (``header`` when there are none)."""
    top = header
    while top > 0 and _NUMBERED.sub("", lines[top - 1], count=1).lstrip().startswith("@"):
        top -= 1
    return top


def _indent(line: str) -> int:
    text = _NUMBERED.sub("", line, count=1)
    return len(text) - len(text.lstrip())


def _merged(ranges: Sequence[tuple[int, int]], last: int) -> list[tuple[int, int]]:
    """``ranges`` clipped to ``0..last`` and merged where they meet or leave fewer than
    ``CONTEXT_LINES`` lines between them."""
    out: list[tuple[int, int]] = []
    for a, b in sorted((max(0, a), min(last, b)) for a, b in ranges):
        if out and a <= out[-1][1] + CONTEXT_LINES:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def _shared(pieces: Sequence[SourceSpan], budget: SpanBudget, assignment: str) -> list[SourceSpan]:
    """Each piece within an even share of what the smaller ones left (lines and characters
    alike), a cut one keeping what the assignment points at; in the pieces' order, without the
    pieces that got not one line."""
    lines, chars = budget.lines, budget.chars
    kept: dict[int, SourceSpan] = {}
    by_size = sorted(range(len(pieces)), key=lambda i: (line_count(pieces[i]), len(pieces[i].content), i))
    for done, index in enumerate(by_size):
        left = len(by_size) - done
        share_lines, share_chars = lines // left, chars // left
        if share_lines <= 0 or share_chars <= 0:
            continue
        piece = pieces[index]
        shown = fitted(piece, share_lines, share_chars)
        if shown is not None and shown.end_line < piece.end_line:
            shown = fitted(focused_on(piece, assignment), share_lines, share_chars) or shown
        if shown is not None:
            kept[index] = shown
            lines -= line_count(shown)
            chars -= len(shown.content)
    return [kept[i] for i in range(len(pieces)) if i in kept]
