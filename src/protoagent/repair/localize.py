"""Fault localization from a failing Python check's output, by reading files only.

From pytest or unittest output: the failing test ids (``checks.failures``), the assertion the
runner printed (expected against actual), the traceback's frames, and from them the few source
functions involved: functions the traceback passes through outside the tests (deepest first),
then the functions the failing test line calls, then the functions those call, every call
resolved by ``repair.resolve`` (``self`` through its class and bases, names through imports;
an ambiguous call is left out). Nothing is imported or executed.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass
from pathlib import Path

from protoagent.checks.failures import failed_tests
from protoagent.checks.python_suites import is_test_code
from protoagent.repair.ranking import rank_lines
from protoagent.repair.resolve import Definition, Function, Resolver
from protoagent.workspace.confined import read_confined

MAX_FUNCTIONS = 3
"""Source functions a localization keeps (the repair shows the model one at a time)."""
MAX_FUNCTION_LINES = 60
"""Longer functions are shown without their docstring and, if still longer, only as a window
around the traceback line that passes through them: a small model cannot read them whole."""
WINDOW_RADIUS = 12
"""Lines kept on each side of the deepest traceback line of a function longer than the limit."""
MAX_MESSAGE_LINES = 8
MAX_MESSAGE_CHARS = 600

_NATIVE_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)', re.M)
_PYTEST_FRAME = re.compile(r"^(?P<file>[^\s:][^:\n]*\.py):(?P<line>\d+): ", re.M)
_EXCEPTION_LINE = re.compile(r"^(?P<message>(?:\w+\.)*\w*(?:Error|Exception)\b.*)$", re.M)
_PYTEST_E_LINE = re.compile(r"^E {1,}(?P<text>.*)$")


@dataclass(frozen=True, slots=True)
class Frame:
    """One traceback frame in a workspace file."""

    path: str
    """Workspace-relative POSIX path."""
    line: int


@dataclass(frozen=True, slots=True)
class SourceFunction:
    """One function the failure points at, with the lines a one-line repair may replace."""

    path: str
    """Workspace-relative file holding the function."""
    name: str
    start: int
    """First line shown (1-based): the ``def`` line, or for a function longer than
    ``MAX_FUNCTION_LINES`` the first line of the window around its traceback line."""
    lines: tuple[str, ...]
    """The function's lines, without line endings."""
    ranked: tuple[int, ...]
    """Every line a repair may replace, most likely first (``repair.ranking``: traceback, data
    flow to the returned value, literals and returned names, branches); the ``def`` line,
    docstrings, comments and blanks are left out."""

    def numbered(self) -> str:
        """The function as the model sees it: each line after its file line number."""
        return "\n".join(f"{self.start + i} {text}" for i, text in enumerate(self.lines))

    def line(self, number: int) -> str:
        return self.lines[number - self.start]


@dataclass(frozen=True, slots=True)
class Localization:
    """What a failing check says and the source functions it points at."""

    failed_tests: tuple[str, ...]
    test_line: str
    """The failing test's source line (usually the assertion)."""
    message: str
    """The assertion or exception the runner printed: expected against actual."""
    functions: tuple[SourceFunction, ...]

    def evidence(self) -> str:
        """The failing assertion as the model is shown it."""
        parts = [f"test: {self.test_line}"] if self.test_line else []
        if self.message:
            parts.append(self.message)
        return "\n".join(parts)


def localize(root: Path, output: str) -> Localization | None:
    """The source functions a failing check's output points at, or ``None`` when it says too little."""
    chain = frames(root, output)
    tests = [f for f in chain if is_test_code(f.path)]
    if not tests:
        return None
    test = tests[0]
    deeper = [f for f in chain[chain.index(test) + 1 :] if not is_test_code(f.path)]
    resolver = Resolver(root)
    found: dict[tuple[str, int], Definition] = {}
    hot: dict[tuple[str, int], set[int]] = {}
    for frame in reversed(deeper):  # the deepest frame is nearest to the error
        parsed = _function_at(resolver, frame.path, frame.line)
        if parsed is not None:
            key = (frame.path, parsed.node.lineno)
            found.setdefault(key, parsed)
            hot.setdefault(key, set()).add(frame.line)
    for definition in _called_functions(resolver, test.path, test.line):
        found.setdefault((definition.path, definition.node.lineno), definition)
    for definition in _callees(resolver, list(found.values())):
        found.setdefault((definition.path, definition.node.lineno), definition)
    # A constructor the test line calls comes after the functions the failure runs through.
    ordered = sorted(found.items(), key=lambda item: item[1].node.name == "__init__" and item[0] not in hot)
    functions = [_source_function(d.path, d.node, list(d.lines), hot.get(key, set())) for key, d in ordered]
    kept = tuple(f for f in functions if f is not None and f.ranked)[:MAX_FUNCTIONS]
    if not kept:
        return None
    test_line = _line(root, test.path, test.line).strip()
    return Localization(failed_tests(output), test_line, assertion_message(output), kept)


def frames(root: Path, output: str) -> list[Frame]:
    """Traceback frames in workspace files, in the order printed."""
    found: list[tuple[int, Frame]] = []
    for pattern in (_NATIVE_FRAME, _PYTEST_FRAME):
        for match in pattern.finditer(output):
            rel = _relative(root, match.group("file"))
            if rel is not None:
                found.append((match.start(), Frame(rel, int(match.group("line")))))
    return [frame for _, frame in sorted(found, key=lambda item: item[0])]


def assertion_message(output: str) -> str:
    """The first failure's message: pytest's ``E`` lines, else the first exception line on."""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if _PYTEST_E_LINE.match(line):
            block = []
            for follow in lines[index:]:
                match = _PYTEST_E_LINE.match(follow)
                if match is None:
                    break
                block.append(match.group("text").rstrip())
            return _bounded("\n".join(block[:MAX_MESSAGE_LINES]))
    match = _EXCEPTION_LINE.search(output)
    if match is None:
        return ""
    block = output[match.start() :].split("\n\n", 1)[0].splitlines()
    return _bounded("\n".join(block[:MAX_MESSAGE_LINES]))


def _bounded(text: str) -> str:
    return text.strip()[:MAX_MESSAGE_CHARS]


def _relative(root: Path, file: str) -> str | None:
    path = Path(file)
    absolute = path if path.is_absolute() else root / path
    try:
        rel = os.path.relpath(os.path.normpath(absolute), root)
    except ValueError:
        return None
    if rel.startswith("..") or not (root / rel).is_file():
        return None
    return rel.replace(os.sep, "/")


def _line(root: Path, rel: str, number: int) -> str:
    try:
        lines = read_confined(root, rel).decode("utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return ""
    return lines[number - 1] if 0 < number <= len(lines) else ""


def _function_at(resolver: Resolver, rel: str, line: int) -> Definition | None:
    """The innermost function holding ``line``."""
    module = resolver.module(rel)
    if module is None:
        return None
    best: Function | None = None
    for node in ast.walk(module.tree):
        if isinstance(node, Function) and node.lineno <= line <= (node.end_lineno or node.lineno):
            if best is None or node.lineno >= best.lineno:
                best = node
    return Definition(rel, best, module.lines) if best is not None else None


def _called_functions(resolver: Resolver, test_rel: str, line: int) -> list[Definition]:
    """Source functions the failing test line calls (else its whole test function calls), each
    resolved by ``resolve_call``; calls it cannot resolve unambiguously are left out."""
    module = resolver.module(test_rel)
    if module is None:
        return []
    enclosing = _function_at(resolver, test_rel, line)
    scope = enclosing.node if enclosing is not None else None
    scopes: list[ast.AST] = [n for n in ast.walk(module.tree) if _spans(n, line)]
    if scope is not None:
        scopes.append(scope)
    for node in scopes:
        found = _resolved_calls(resolver, test_rel, node, scope)
        if found:
            return found
    return []


def _spans(node: ast.AST, line: int) -> bool:
    if not isinstance(node, ast.stmt):
        return False
    return node.lineno <= line <= (node.end_lineno or node.lineno) and not isinstance(node, Function | ast.ClassDef)


def _resolved_calls(resolver: Resolver, rel: str, node: ast.AST, scope: Function | None) -> list[Definition]:
    """The source (non-test) functions the calls inside ``node`` run, in the order they appear."""
    found: dict[tuple[str, int], Definition] = {}
    for child in ast.walk(node):
        if isinstance(child, ast.Call):
            target = resolver.resolve_call(rel, child, scope)
            if target is not None and not is_test_code(target.path) and target.node is not scope:
                found.setdefault((target.path, target.node.lineno), target)
    return list(found.values())


def _callees(resolver: Resolver, found: list[Definition]) -> list[Definition]:
    """Functions that the found ones call (one level), resolved through ``self``'s class and imports."""
    callees: list[Definition] = []
    for definition in found:
        if not is_test_code(definition.path):
            callees.extend(_resolved_calls(resolver, definition.path, definition.node, definition.node))
    return callees


def _source_function(path: str, node: Function, lines: list[str], hot: set[int]) -> SourceFunction | None:
    end = node.end_lineno or node.lineno
    top = node.lineno
    body_start = node.body[0].lineno
    skip = set(range(node.lineno, body_start))
    first = node.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        skip |= set(range(first.lineno, (first.end_lineno or first.lineno) + 1))
        if end - top + 1 > MAX_FUNCTION_LINES and len(node.body) > 1:
            top = node.body[1].lineno  # a long function is shown without its docstring
    if end - top + 1 > MAX_FUNCTION_LINES:
        if not hot:
            return None
        deepest = max(hot)
        top, end = max(top, deepest - WINDOW_RADIUS), min(end, deepest + WINDOW_RADIUS)
    editable = [
        n
        for n in range(max(body_start, top), end + 1)
        if n not in skip and lines[n - 1].strip() and not _comment(lines[n - 1])
    ]
    return SourceFunction(path, node.name, top, tuple(lines[top - 1 : end]), rank_lines(node, editable, hot))


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")
