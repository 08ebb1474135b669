"""The source of the exact symbols an objective names, shown in the Architect's first request.

"``Signal.send()`` and ``send_async()`` ignore ``muted()``": the lead would spend its first
request looking those definitions up. A name written as code (in backticks, called with ``(``,
dotted, snake_case, or a method called on a call's result: ``HumanName('x').initials()``) that the
symbol index resolves to exactly one definition is shown as ``code_context`` would show it (a
definition of up to 80 lines whole; a class too long for that is left out, its methods are what
the objective is about), with its file's revision,
and recorded as ``source.localized`` for the Architect, so it counts as read and reaches workers
like its own reads. A name that matches nothing, or more than one definition, is left out: no
guessing. Pure reads through the index; nothing is imported or run.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.models.profile import PromptProfile
from protoagent.navigation.query import definition_read
from protoagent.navigation.service import answer
from protoagent.workflow.source_spans import SourceSpan, SpanBudget, render_together, span_from

OBJECTIVE_BUDGETS: dict[PromptProfile, SpanBudget] = {
    "standard": SpanBudget(lines=120, chars=6_000),
    "small": SpanBudget(lines=0, chars=0),
}
"""All the objective's definitions together; the small profile's first request has no room."""
MAX_SYMBOLS = 4
FILE_SUFFIXES = frozenset(
    "py pyi js jsx ts tsx md rst txt json toml cfg ini yaml yml html css sh c h cpp rs go java rb".split()
)
"""A dotted word ending so is a file name, not a symbol."""
INDEX_TIME_LIMIT_S = 5.0
"""How long the first request may wait for the symbol index (it keeps building for later calls)."""
OBJECTIVE_SOURCE_HEADER = (
    "Source of the symbols your objective names, read by the harness (current revisions; no need to "
    "read these lines again):"
)
_CODE = re.compile(
    r"`([A-Za-z_][\w.]*)(?:\(\))?`"  # `name`, `a.b`, `f()`
    r"|(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?=[\s(),;:'\"!?]|\.(?:\s|$)|$)"  # a.b.c
    r"|(?<![\w.])([A-Za-z_]\w*)\("  # name(
    r"|(?<![\w.`])([a-z][a-z0-9]*_[a-z0-9_]*\w)(?![\w(])"  # snake_case
    r"|\)\.([A-Za-z_]\w*)\("  # a method called on a call's result: HumanName('x').initials(
)


def objective_symbols(objective: str) -> list[str]:
    """The names ``objective`` writes as code, in order, without repeats."""
    names: list[str] = []
    for match in _CODE.finditer(objective):
        name = next(group for group in match.groups() if group).strip(".")
        last = name.rsplit(".", 1)[-1]
        if len(last) < 2 or ("." in name and last.lower() in FILE_SUFFIXES) or name in names:
            continue  # "f(1)", "e.g", "dates.py"
        names.append(name)
    return names[:MAX_SYMBOLS]


def _candidates(name: str) -> list[str]:
    """``a.b.c`` is asked as itself, then ``b.c``, then ``c`` (a module prefix the index may not
    know); a plain name as itself."""
    parts = name.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def objective_spans(
    root: Path, objective: str, budget: SpanBudget, *, home: Path | None, shown: Sequence[SourceSpan] = ()
) -> tuple[SourceSpan, ...]:
    """The one definition each code-like name of ``objective`` resolves to, within ``budget``,
    leaving out definitions ``shown`` already holds."""
    if budget.lines <= 0 or budget.chars <= 0:
        return ()
    spans: list[SourceSpan] = []
    lines, chars = budget.lines, budget.chars
    seen = {(s.path, s.start_line) for s in shown}
    for name in objective_symbols(objective):
        span = _one_definition(root, name, home)
        if span is None or (span.path, span.start_line) in seen:
            continue
        size = span.end_line - span.start_line + 1
        if size > lines or len(span.content) > chars:
            continue
        seen.add((span.path, span.start_line))
        spans.append(span)
        lines -= size
        chars -= len(span.content)
    return tuple(spans)


def render_objective_source(spans: Sequence[SourceSpan]) -> str:
    """The context section for the spans; empty when there are none."""
    return "\n".join([OBJECTIVE_SOURCE_HEADER, render_together(spans)]) if spans else ""


def _one_definition(root: Path, name: str, home: Path | None) -> SourceSpan | None:
    for symbol in _candidates(name):
        try:
            found = answer(root, "definition", symbol, home=home, time_limit_s=INDEX_TIME_LIMIT_S)
        except (ToolRejected, OSError):
            continue
        if len(found.results) != 1:
            return None  # ambiguous: a shorter name can only match more
        hit = found.results[0]
        shown = definition_read(root, hit)
        span = None if shown is None else span_from(shown)
        if span is not None and hit.kind == "class" and span.end_line < (hit.end_line or hit.line):
            return None  # a class too long to show whole: its head (a docstring) is not what was asked
        return span
    return None
