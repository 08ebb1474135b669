"""What a candidate edit does to a file, and which candidates are worth a check run.

A candidate replaces one line (a two-line candidate is two of them). The model's line is cut
where its code ends (a small model often goes on in prose), must leave the file parseable, must
change something, and must not copy a literal from the failing test into the source (that passes
the test and fixes nothing). The edit reaches ``edit_file`` as an exact span that occurs once in
the file.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import tokenize
from collections.abc import Sequence
from dataclasses import replace

from protoagent.repair.candidates import CandidateEdit
from protoagent.repair.localize import Localization


def replace_line(text: str, edit: CandidateEdit) -> str:
    """``text`` with line ``edit.line`` replaced by ``edit.new`` (its line ending kept)."""
    lines = text.splitlines(keepends=True)
    old = lines[edit.line - 1]
    ending = old[len(old.rstrip("\r\n")) :]
    lines[edit.line - 1] = edit.new + ending
    return "".join(lines)


def code_prefix(original: str, edit: CandidateEdit) -> CandidateEdit | None:
    """The edit with ``new`` cut to its longest beginning (at a space) under which the file still
    parses and the line names nothing the file and the builtins do not know: a small model often
    writes the line and then goes on in prose. ``None`` when no beginning qualifies or the one
    that does is the old line again."""
    if not edit.path.endswith(".py"):
        return edit
    known = _names(original) | BUILTIN_NAMES
    words = edit.new.rstrip().split(" ")
    indent = len(edit.new) - len(edit.new.lstrip(" "))
    for end in range(len(words), indent, -1):
        new = " ".join(words[:end]).rstrip()
        if not new.strip():
            break
        tree = _parsed(replace_line(original, replace(edit, new=new)))
        if tree is not None and _loaded_names(tree, edit.line) <= known:
            return None if new.strip() == edit.old.strip() else replace(edit, new=new)
    return None


BUILTIN_NAMES = frozenset(dir(builtins))
TRIVIAL_VALUES = frozenset({"0", "1", "-1", "''", "None", "True", "False"})


def copies_expected_value(edit: CandidateEdit, localization: Localization, source: str = "") -> bool:
    """The edit writes the failing test's expected value into the source (``return "Ada"`` for
    ``assert name(p) == "Ada"``): it would pass that test and fix nothing. Expected values are
    the literals the assertion compares against, outside any call's arguments; a literal the
    file ``source`` already holds on another line is the file's own, not copied from the test."""
    new = _line_values(edit.new.strip()) - _line_values(edit.old.strip()) - TRIVIAL_VALUES
    own = _line_values(source) if source else set()
    return bool((new - own) & expected_values(localization.test_line))


def expected_values(test_line: str) -> set[str]:
    """Literals (as ``repr``) an assertion line compares against, outside the calls it makes."""
    tree = _parsed(test_line.strip())
    if tree is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                found |= _constants_outside_calls(side)
        elif isinstance(node, ast.Call) and _is_assert_method(node.func):
            for argument in node.args:
                found |= _constants_outside_calls(argument)
    return found


def _is_assert_method(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and func.attr.startswith("assert")


def _constants_outside_calls(node: ast.AST) -> set[str]:
    if isinstance(node, ast.Call):
        return set()
    if isinstance(node, ast.Constant):
        return {repr(node.value)}
    found: set[str] = set()
    for child in ast.iter_child_nodes(node):
        found |= _constants_outside_calls(child)
    return found


def _line_values(code: str) -> set[str]:
    """The string and number literals of one line of code (as ``repr`` of their values)."""
    found: set[str] = set()
    # A line cut mid-token still yields the literals before the cut.
    with contextlib.suppress(tokenize.TokenError, SyntaxError):
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in (tokenize.STRING, tokenize.NUMBER):
                with contextlib.suppress(ValueError, SyntaxError):
                    found.add(repr(ast.literal_eval(token.string)))
    return found


def _names(text: str) -> set[str]:
    """Every identifier the file's text holds."""
    found: set[str] = set()
    # Text that does not tokenize to the end still yields the names before the fault.
    with contextlib.suppress(tokenize.TokenError, SyntaxError):
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.NAME:
                found.add(token.string)
    return found


def _loaded_names(tree: ast.Module, line: int) -> set[str]:
    """Names read (not attributes, not assignment targets) on ``line``."""
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.lineno == line
    }


def _parsed(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def exact_span(text: str, edits: Sequence[CandidateEdit]) -> tuple[str, str]:
    """``old`` and ``new`` for ``edit_file``: the lines from the first edit's to the last's, widened
    by neighbouring lines until the old text occurs exactly once in the file."""
    lines = text.splitlines(keepends=True)
    top, bottom = min(e.line for e in edits) - 1, max(e.line for e in edits) - 1
    first, last = top, bottom
    while True:
        old = "".join(lines[first : last + 1]).rstrip("\r\n")
        if text.count(old) == 1 or (first == 0 and last == len(lines) - 1):
            break
        first, last = max(0, first - 1), min(len(lines) - 1, last + 1)
    replaced = {e.line - 1: e.new for e in edits}
    region = [replaced[i] + "\n" if i in replaced else lines[i] for i in range(first, last + 1)]
    return old, "".join(region).rstrip("\r\n")
