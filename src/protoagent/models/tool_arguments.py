"""Tool-call arguments from a model, parsed and bounded before anything else sees them.

A model reply is untrusted input: its arguments may be megabytes long, nested thousands of
levels deep, or not JSON at all. Each provider adapter turns such arguments into one small
marker object (``{"_unparsed_arguments": excerpt, "_problem": why}``) instead of raising, so the
reply is recorded with bounded size and the tool pipeline rejects the call with feedback the
model can act on. Nothing here recurses on the input, so depth can never raise RecursionError.
"""

from __future__ import annotations

import json
import reprlib
from typing import Any

from protoagent.excerpts import excerpt

MAX_ARGUMENT_CHARS = 1024 * 1024
"""The largest arguments a tool call may carry, in characters of JSON (about 250k tokens)."""
MAX_ARGUMENT_DEPTH = 64
"""The deepest nesting of objects and arrays a tool call's arguments may have."""
UNPARSED_KEY = "_unparsed_arguments"
"""The marker key: its value is a bounded excerpt of arguments that could not be used."""
PROBLEM_KEY = "_problem"
"""Beside the marker: one line saying what was wrong."""

_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxdict = _REPR.maxlist = 8


def rejected_arguments(problem: str, source: str) -> dict[str, Any]:
    """The marker that stands for arguments that cannot be used; ``source`` is cut to an excerpt."""
    return {UNPARSED_KEY: excerpt(source), PROBLEM_KEY: problem}


def parse_arguments(raw: str) -> dict[str, Any]:
    """Tool-call arguments from their JSON text; anything unusable becomes the bounded marker."""
    if not raw.strip():
        return {}
    if len(raw) > MAX_ARGUMENT_CHARS:
        return rejected_arguments(_too_large(len(raw)), raw)
    try:
        value = json.loads(raw)
    except RecursionError:
        return rejected_arguments(_too_deep(), raw)
    except ValueError as exc:
        return rejected_arguments(f"the arguments are not valid JSON ({excerpt(str(exc), 120)})", raw)
    if not isinstance(value, dict):
        return rejected_arguments(f"the arguments must be a JSON object, not {type(value).__name__}", raw)
    return bounded_arguments(value)


def bounded_arguments(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` itself when it is within the size and depth limits, else the bounded marker."""
    problem = argument_problem(value)
    if problem is None:
        return value
    return rejected_arguments(problem, _REPR.repr(value))


def argument_problem(value: Any) -> str | None:
    """What makes already-parsed arguments unusable (too big, too deep), or None. Iterative."""
    size = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return _too_deep()
        if isinstance(node, dict):
            for key, item in node.items():
                size += len(str(key)) + 4
                stack.append((item, depth + 1))
        elif isinstance(node, list | tuple):
            size += 2 * len(node) + 2
            stack.extend((item, depth + 1) for item in node)
        elif isinstance(node, str):
            size += len(node) + 2
        else:
            size += 8
        if size > MAX_ARGUMENT_CHARS:
            return _too_large(size, at_least=True)
    return None


def is_rejected(arguments: dict[str, Any]) -> bool:
    """Whether these arguments are the marker left by :func:`rejected_arguments`."""
    return UNPARSED_KEY in arguments


def _too_large(size: int, *, at_least: bool = False) -> str:
    amount = f"over {size}" if at_least else str(size)
    return (
        f"the arguments are {amount} characters, over the {MAX_ARGUMENT_CHARS}-character limit; "
        "send smaller pieces (for a big file, write it in parts with edit_file)"
    )


def _too_deep() -> str:
    return f"the arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep; send a flat JSON object"
