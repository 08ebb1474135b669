"""Localization by execution: the lines of the workspace that the failing tests actually run.

A one- or two-line bug sits on a line the failing test executes (or, for the second line of a
pair, near one). The failing check is run once more in the scratch copy, inside the run's
sandbox, under a small line tracer (``sys.settrace``, standard library only): the check's own
Python runner (``python -m pytest ...``, ``python -m unittest ...`` or ``python script.py``)
started by ``runpy`` after the tracer is installed, narrowed to the failing test ids where the
runner takes them (pytest). The tracer records the lines run in files under the scratch copy and
writes them to a file of the copy when the runner exits. A check that is not a Python runner,
or whose trace does not come back, gives ``None``: the ranking then stays the static one.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from protoagent.checks.types import CheckSpec
from protoagent.repair.scratch import ScratchWorkspace

OUTPUT = ".protoagent-executed-lines.json"
"""Where the tracer writes the lines, in the scratch copy's root (removed after reading)."""
TRACE_SECONDS = 40.0
"""The traced run may take this long, at most (tracing slows a run down two to three times)."""


@dataclass(frozen=True, slots=True)
class Executed:
    """What the failing tests ran: lines per file, and the types of the locals at each line."""

    lines: Mapping[str, frozenset[int]]
    """Workspace-relative path -> the line numbers run in it."""
    types: Mapping[tuple[str, int], Mapping[str, str]] = field(default_factory=dict)
    """(path, line) -> each local name's type name when the line first ran."""
    returned: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    """(path, function name) -> the ``repr`` of the values it returned (the first few)."""

    def ran(self, path: str) -> frozenset[int]:
        """The lines run in ``path`` (none when the trace does not name it)."""
        return self.lines.get(path, frozenset())

    def names_at(self, path: str, line: int) -> Mapping[str, str] | None:
        return self.types.get((path, line))

    def returned_value(self, path: str, name: str, value: str) -> bool:
        """Whether the function ``name`` of ``path`` returned a value printed as ``value``."""
        return bool(value) and value in self.returned.get((path, name), ())


_TRACER = """
import json, os, runpy, sys, threading
root, out, mode, target = sys.argv[1:5]
rest = sys.argv[5:]
prefix = os.path.join(os.path.realpath(root), "")
seen, decided, kinds, returned = {}, {}, {}, {}
def local(lines, path):
    def trace(frame, event, arg):
        if event == "return":
            values = returned.setdefault((path, frame.f_code.co_name), [])
            if len(values) < 8:
                try:
                    values.append(repr(arg)[:200])
                except Exception:  # a value whose repr raises is left out; the run goes on
                    pass
        elif event == "line":
            line = frame.f_lineno
            if line not in lines:
                lines.add(line)
                names = list(frame.f_locals.items())[:40]
                kinds[(path, line)] = {k: type(v).__name__ for k, v in names}
        return trace
    return trace
def tracer(frame, event, arg):
    code = frame.f_code
    lines = decided.get(code)
    if lines is None:
        path = os.path.realpath(code.co_filename) if os.path.isabs(code.co_filename) else ""
        lines = seen.setdefault(path, set()) if path.startswith(prefix) else False
        decided[code] = lines
    if lines is False:
        return None
    lines.add(frame.f_lineno)
    return local(lines, os.path.realpath(code.co_filename))
def report():
    sys.settrace(None)
    found = {os.path.relpath(p, prefix): sorted(v) for p, v in seen.items() if v}
    types = [[os.path.relpath(p, prefix), n, t] for (p, n), t in kinds.items()]
    values = [[os.path.relpath(p, prefix), n, v] for (p, n), v in returned.items()]
    with open(out, "w", encoding="utf-8") as stream:
        json.dump({"lines": found, "types": types, "returned": values}, stream)
sys.argv = [target, *rest]
if mode == "path":
    sys.path[0] = os.path.dirname(os.path.abspath(target))
class Plugin:
    # Under pytest only the tests' own calls are traced, not pytest's start-up.
    def pytest_runtest_call(self, item):
        threading.settrace(tracer)
        sys.settrace(tracer)
    def pytest_runtest_teardown(self, item):
        sys.settrace(None)
        threading.settrace(None)
if target != "pytest":
    threading.settrace(tracer)
    sys.settrace(tracer)
try:
    if target == "pytest":
        import pytest
        sys.exit(pytest.main(rest, plugins=[Plugin()]))
    elif mode == "module":
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    else:
        runpy.run_path(target, run_name="__main__")
except SystemExit:
    pass
finally:
    report()
"""


def traced_check(check: CheckSpec, root: str, out: str, failed_tests: Sequence[str]) -> CheckSpec | None:
    """``check`` run under the tracer (narrowed to ``failed_tests`` for pytest), or ``None`` when
    its command is not a Python runner the tracer can start."""
    argv = list(check.argv)
    if len(argv) < 2 or not os.path.basename(argv[0]).startswith("python"):
        return None
    if argv[1] == "-m" and len(argv) >= 3:
        mode, target, rest = "module", argv[2], argv[3:]
    elif argv[1].endswith(".py"):
        mode, target, rest = "path", argv[1], argv[2:]
    else:
        return None
    if target == "pytest" and failed_tests:
        rest = [*rest, *failed_tests]
    return replace(check, id=f"{check.id}-traced", argv=(argv[0], "-c", _TRACER, root, out, mode, target, *rest))


async def executed_lines(
    scratch: ScratchWorkspace, check: CheckSpec, failed_tests: Sequence[str], timeout_s: float = TRACE_SECONDS
) -> Executed | None:
    """The lines the failing tests of ``check`` run in the scratch copy, or ``None`` when the
    check cannot be traced or its trace did not come back."""
    out = scratch.root / OUTPUT
    traced = traced_check(check, str(scratch.root), str(out), failed_tests)
    if traced is None:
        return None
    try:
        await scratch.run(traced, timeout_s)
        return parse_trace(out.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None
    finally:
        out.unlink(missing_ok=True)


def parse_trace(text: str) -> Executed | None:
    """The executed lines the tracer wrote, or ``None`` when they are not what it writes."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("lines"), dict):
        return None
    lines = {
        str(path).replace(os.sep, "/"): frozenset(n for n in found if isinstance(n, int) and n > 0)
        for path, found in data["lines"].items()
        if isinstance(found, list) and not str(path).startswith("..")
    }
    types: dict[tuple[str, int], Mapping[str, str]] = {}
    for entry in data.get("types") or []:
        if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[1], int) and isinstance(entry[2], dict):
            types[(str(entry[0]).replace(os.sep, "/"), entry[1])] = {str(k): str(v) for k, v in entry[2].items()}
    returned: dict[tuple[str, str], tuple[str, ...]] = {}
    for entry in data.get("returned") or []:
        if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], list):
            returned[(str(entry[0]).replace(os.sep, "/"), str(entry[1]))] = tuple(str(v) for v in entry[2])
    return Executed(lines, types, returned)
