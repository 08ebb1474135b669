"""Which test modules a Tester is pointed to: the ones the run's checks discovered, those whose
names share a word with the assignment first, so the Tester can read the right one in its first
request instead of listing folders to find it; the one read for it is the module its assignment
names, when it names one."""

from __future__ import annotations

import os
import re

from protoagent.checks.python_suites import is_test_file
from protoagent.checks.types import CheckPlan
from protoagent.workflow.span_choice import first_named_at, names_path

MAX_NAMED = 8
"""Test modules named at most; the rest are counted."""
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    """The words of ``text`` over two letters, singular (``validators`` and ``Validator`` share one)."""
    words = (w for w in _WORD.findall(text.lower().replace("_", " ")) if len(w) > 2)
    return {w[:-1] if len(w) > 4 and w.endswith("s") and not w.endswith("ss") else w for w in words} - {"test"}


def ranked_test_files(plan: CheckPlan, assignment: str) -> list[str]:
    """The plan's test modules, those sharing a word with ``assignment`` first (most shared words
    first), otherwise in discovery order."""
    modules = [path for path in plan.dependency_files if is_test_file(os.path.basename(path))]
    wanted = _words(assignment)
    shared = {path: len(_words(os.path.splitext(path)[0]) & wanted) for path in modules}
    return sorted(modules, key=lambda path: -shared[path])


def likely_test_module(plan: CheckPlan | None, assignment: str) -> str | None:
    """The first test module ``assignment`` names by path, else the one sharing most words with
    it (at least one), if any."""
    if plan is None:
        return None
    wanted = _words(assignment)
    ranked = ranked_test_files(plan, assignment)
    named = sorted((m for m in ranked if names_path(assignment, m)), key=lambda m: first_named_at(assignment, m))
    if named:
        return named[0]
    if ranked and _words(os.path.splitext(ranked[0])[0]) & wanted:
        return ranked[0]
    return None


def test_files_note(plan: CheckPlan | None, assignment: str) -> str | None:
    """One line naming the test modules the checks run, or ``None`` when discovery found none."""
    if plan is None:
        return None
    modules = ranked_test_files(plan, assignment)
    if not modules:
        return None
    named = ", ".join(modules[:MAX_NAMED])
    rest = len(modules) - MAX_NAMED
    more = f" and {rest} more" if rest > 0 else ""
    if plan.dependency_files_truncated:
        more += " (discovery stopped at its file limit: there may be others)"
    return f"Test modules the checks run ({len(modules)}): {named}{more}."
