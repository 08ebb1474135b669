"""Which lines of a localized function a repair tries first: every line is ranked, none left out.

A line scores for what the failure says about it: the traceback passes through it; it returns
(what a test's assertion compares is what the function returns); it computes a name that flows
into a returned value (data flow, backwards from each ``return``: the nearer the return, the
higher); it holds a literal or returns a bare name (the wrong constant and the wrong returned
variable, the two kinds a one-line repair misses when it only looks near the error); it decides
a branch (a condition and its return), above all the branch that let a traceback line run.
Ties go bottom-up: a function's result is made near its end. The model's own likelihood of an
alternative orders the candidates within each line (``llama_sampling.line_variants``), and the
search visits every ranked line shallowly before it goes deeper into any (``repair.search``).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

Function = ast.FunctionDef | ast.AsyncFunctionDef

TRACEBACK = 8.0
RETURN = 5.0
FLOW = 3.0
"""Data-flow weight of a line one step before a return; halved at each further step."""
LITERAL = 1.5
RETURNED_NAME = 1.5
BRANCH = 1.0
GUARD = 5.0
"""A condition whose body holds a traceback line (the raise it guards)."""


def rank_lines(node: Function, editable: Iterable[int], hot: set[int]) -> tuple[int, ...]:
    """``editable`` line numbers of ``node`` in the order a repair should try them."""
    scores = line_scores(node, hot)
    return tuple(sorted(editable, key=lambda n: (-scores.get(n, 0.0), -n)))


def line_scores(node: Function, hot: set[int]) -> dict[int, float]:
    """Each line's score: traceback, returns, data flow to a return, literals, branches."""
    scores: dict[int, float] = {}

    def add(line: int, value: float) -> None:
        scores[line] = scores.get(line, 0.0) + value

    for line in hot:
        add(line, TRACEBACK)
    statements = [s for s in ast.walk(node) if isinstance(s, ast.stmt) and s is not node]
    for statement in statements:
        for line in _own_lines(statement):
            if _has_literal(statement):
                add(line, LITERAL)
        if isinstance(statement, ast.Return):
            add(statement.lineno, RETURN)
            if isinstance(statement.value, ast.Name | ast.Attribute):
                add(statement.lineno, RETURNED_NAME)
        if isinstance(statement, ast.If | ast.While | ast.For | ast.Assert):
            add(statement.lineno, BRANCH)
        if isinstance(statement, ast.If | ast.While) and any(_within(s, hot) for s in statement.body):
            add(statement.lineno, GUARD)  # the condition that let the failing line run
    for line, weight in _flow_to_returns(node, statements).items():
        add(line, weight)
    return scores


def _within(statement: ast.stmt, lines: set[int]) -> bool:
    return any(statement.lineno <= n <= (statement.end_lineno or statement.lineno) for n in lines)


def _own_lines(statement: ast.stmt) -> range:
    """The lines of a simple statement; a compound statement's header line only."""
    if isinstance(statement, ast.If | ast.While | ast.For | ast.With | ast.Try | ast.FunctionDef | ast.ClassDef):
        return range(statement.lineno, statement.lineno + 1)
    return range(statement.lineno, (statement.end_lineno or statement.lineno) + 1)


def _has_literal(statement: ast.stmt) -> bool:
    """A number or a short string in the statement's own expression (not its nested body)."""
    for child in _own_expressions(statement):
        for sub in ast.walk(child):
            if isinstance(sub, ast.Constant) and not isinstance(sub.value, bool) and sub.value is not None:
                if isinstance(sub.value, int | float) or (isinstance(sub.value, str) and len(sub.value) <= 20):
                    return True
    return False


def _own_expressions(statement: ast.stmt) -> list[ast.AST]:
    """The expressions a statement evaluates itself, without the statements nested in it."""
    nested = {id(s) for field in ("body", "orelse", "finalbody", "handlers") for s in getattr(statement, field, [])}
    return [c for c in ast.iter_child_nodes(statement) if id(c) not in nested and not isinstance(c, ast.stmt)]


def _flow_to_returns(node: Function, statements: list[ast.stmt]) -> dict[int, float]:
    """Lines that assign names the returned values are computed from, weighted by distance."""
    assigns: dict[str, list[ast.stmt]] = {}
    for statement in statements:
        for name in _assigned(statement):
            assigns.setdefault(name, []).append(statement)
    weights: dict[int, float] = {}
    frontier = {n for s in statements if isinstance(s, ast.Return) for n in _read(s)}
    seen: set[str] = set()
    weight = FLOW
    while frontier and weight >= 0.25:
        following: set[str] = set()
        for name in frontier - seen:
            seen.add(name)
            for statement in assigns.get(name, []):
                for line in _own_lines(statement):
                    weights[line] = max(weights.get(line, 0.0), weight)
                following |= _read(statement)
        frontier, weight = following, weight / 2
    return weights


def _targets(statement: ast.stmt) -> list[ast.expr]:
    if isinstance(statement, ast.Assign):
        return list(statement.targets)
    if isinstance(statement, ast.AugAssign | ast.AnnAssign | ast.For):
        return [statement.target]
    return []


def _assigned(statement: ast.stmt) -> set[str]:
    found: set[str] = set()
    for target in _targets(statement):
        found |= {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}
        # self.total = ... flows into a return of self.total
        found |= {_dotted(n) for n in ast.walk(target) if isinstance(n, ast.Attribute) and _dotted(n)}
    return found


def _read(statement: ast.stmt) -> set[str]:
    found: set[str] = set()
    written = {id(t) for t in _targets(statement)}
    for child in _own_expressions(statement):
        if id(child) in written:
            continue
        for sub in ast.walk(child):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
                found.add(sub.id)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Load) and _dotted(sub):
                found.add(_dotted(sub))
    if isinstance(statement, ast.AugAssign):
        found |= _assigned(statement)
    return found


def _dotted(node: ast.Attribute) -> str:
    """``self.total`` for an attribute of a plain name, else ``""``."""
    return f"{node.value.id}.{node.attr}" if isinstance(node.value, ast.Name) else ""
