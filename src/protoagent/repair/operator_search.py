"""The first phase of a guided repair's search: operator edits at the lines the failing test runs.

The failing check is traced once (``repair.trace``); in each localized function only the lines
it ran are candidates for a one-line fix (when the trace did not come back, every ranked line
is). Every such line's operator edits (``repair.operators``) are ordered by their prior and the
line's rank (``repair.ranking``) and tried one by one. Then two-line fixes: each single that
moved the failure (the check still fails, with another message) is put in place, the check is
traced again, and edits of the other lines of the same function that now run are tried with it
(the same operator first: two comparisons of one function, two assignments of one chain). The
phase takes at most ``SINGLES_SHARE`` of the repair's seconds for singles and ``PAIRS_SHARE``
with its pairs; the model's candidates get the rest. ``PROTOAGENT_REPAIR_OPERATORS=off`` skips it.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from protoagent.checks.failures import failed_tests
from protoagent.checks.types import CheckSpec
from protoagent.repair.candidates import CandidateEdit
from protoagent.repair.edits import replace_line
from protoagent.repair.localize import Localization, SourceFunction, assertion_message
from protoagent.repair.operators import Pools, Scored, line_candidates, pools
from protoagent.repair.scratch import ScratchWorkspace
from protoagent.repair.trace import Executed, executed_lines

OPERATORS_ENV = "PROTOAGENT_REPAIR_OPERATORS"
"""``off`` leaves every candidate to the model (the operator phase is skipped)."""
SINGLES_SHARE = 0.55
"""Of the repair's seconds, the share operator singles may use."""
PAIRS_SHARE = 0.8
"""Of the repair's seconds, the share the operator phase may use with its pairs."""
LINE_STEP = 0.25
"""Prior given up per place a line stands lower in the ranking."""
FUNCTION_STEP = 0.5
"""Prior given up per place a function stands lower in the localization."""
MOVED_FIRSTS = 3
"""Moved singles whose pairs are tried, at most."""
SECONDS_PER_FIRST = 12
"""Second edits tried with one moved single, at most."""


Progress = tuple[int, int, float]
"""Fewer failing tests (negated count), a later failing line of the test (its earlier assertions
pass), then how near the actual value came to the expected."""
_COMPARED = re.compile(r"assert (?P<left>.+?) == (?P<right>.+)$", re.M)
_TEST_FRAME = re.compile(r"^(?P<file>[^\s:]*test[^\s:]*\.py):(?P<line>\d+): ", re.M)


def progress(output: str, message: str) -> Progress:
    """How far a failure is from passing, as the runner printed it (greater is nearer)."""
    match = _COMPARED.search(message)
    near = difflib.SequenceMatcher(None, match["left"], match["right"]).ratio() if match else 0.0
    lines = [int(m["line"]) for m in _TEST_FRAME.finditer(output)]
    return (-len(failed_tests(output)), max(lines, default=0), near)


def operators_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """Off only when ``PROTOAGENT_REPAIR_OPERATORS`` says ``off``, ``0``, ``false`` or ``no``."""
    value = (environ if environ is not None else os.environ).get(OPERATORS_ENV, "on").strip().lower()
    return value not in ("off", "0", "false", "no")


@dataclass(frozen=True, slots=True)
class Planned:
    """One operator edit to try, with the function it belongs to."""

    scored: Scored
    function: SourceFunction
    score: float


Try = Callable[[SourceFunction, tuple[CandidateEdit, ...], str], Awaitable[bool | None]]
"""Runs the checks with edits in place: ``None`` passed, else whether the failure moved."""
Usable = Callable[[str, CandidateEdit], CandidateEdit | None]
"""The edit as it may run (cut, checked), or ``None`` when it may not."""


@dataclass(slots=True)
class OperatorPhase:
    scratch: ScratchWorkspace
    localization: Localization
    checks: Sequence[CheckSpec]
    attempt: Try
    usable: Usable
    left_s: Callable[[], float]
    seconds: float
    last_output: Callable[[], str]
    baseline: str
    """The failing check's output at baseline."""
    pools: dict[tuple[str, int], Pools] = field(default_factory=dict)
    """Each function's pools, made once (a module of thousands of lines takes a while to read)."""

    async def run(self) -> bool:
        """``True`` when a candidate passed or the budget is spent."""
        executed = await self._trace()
        planned = self._plan(executed, exclude=None)
        moved: list[tuple[Progress, Planned]] = []
        baseline = progress(self.baseline, self.localization.message)
        for item in planned:
            if self._spent(SINGLES_SHARE):
                break
            original = self.scratch.read(item.function.path)
            edit = self.usable(original, item.scored.edit)
            if edit is None:
                continue
            verdict = await self.attempt(item.function, (edit,), original)
            if verdict is None:
                return True
            made = progress(self.last_output(), assertion_message(self.last_output()))
            if verdict and made > baseline:
                moved.append(
                    (made, Planned(Scored(edit, item.scored.prior, item.scored.kind), item.function, item.score))
                )
        moved.sort(key=lambda m: m[0], reverse=True)  # the most progress first; ties keep the plan's order
        for _, first in moved[:MOVED_FIRSTS]:
            if self._spent(PAIRS_SHARE):
                break
            if await self._pairs_with(first):
                return True
        return False

    def _spent(self, share: float) -> bool:
        return self.left_s() <= self.seconds * (1 - share)

    async def _trace(self, with_edit: CandidateEdit | None = None) -> Executed | None:
        if not self.checks:
            return None
        original = self.scratch.read(with_edit.path) if with_edit is not None else ""
        if with_edit is not None:
            self.scratch.write(with_edit.path, replace_line(original, with_edit))
        try:
            return await executed_lines(
                self.scratch, self.checks[0], self.localization.failed_tests, max(1.0, min(40.0, self.left_s()))
            )
        finally:
            if with_edit is not None:
                self.scratch.write(with_edit.path, original)

    def _plan(self, executed: Executed | None, exclude: CandidateEdit | None) -> list[Planned]:
        found: list[Planned] = []
        for place, function in enumerate(self._ordered(executed)):
            if exclude is not None and function.path != exclude.path:
                continue
            ran = executed.ran(function.path) if executed is not None else None
            lines = [n for n in function.ranked if ran is None or n in ran]
            if exclude is not None:
                lines = [n for n in lines if n != exclude.line]
            key = (function.path, function.start)
            if key not in self.pools:
                self.pools[key] = pools(function, self.scratch.read(function.path))
            pool = self.pools[key]
            for rank, line in enumerate(lines):
                types = executed.names_at(function.path, line) if executed is not None else None
                for scored in line_candidates(function, line, pool, types):
                    score = scored.prior - LINE_STEP * rank - FUNCTION_STEP * place
                    found.append(Planned(scored, function, score))
        return sorted(found, key=lambda p: -p.score)

    def _ordered(self, executed: Executed | None) -> list[SourceFunction]:
        """The localized functions, those that returned the failing assertion's actual value first
        (data flow to the assertion, as the trace saw it)."""
        match = _COMPARED.search(self.localization.message)
        actual = match["left"].strip() if match else ""
        functions = list(self.localization.functions)
        if executed is None or not actual:
            return functions
        return sorted(functions, key=lambda f: not executed.returned_value(f.path, f.name, actual))

    async def _pairs_with(self, first: Planned) -> bool:
        """Second edits of the same function tried with ``first`` in place (the lines that run
        with it in place; the same operator first)."""
        executed = await self._trace(first.scored.edit)
        seconds = [p for p in self._plan(executed, exclude=first.scored.edit) if p.function is first.function]
        seconds.sort(key=lambda p: -(p.score + (1.0 if p.scored.kind == first.scored.kind else 0.0)))
        tried = 0
        for second in seconds:
            if tried >= SECONDS_PER_FIRST or self._spent(PAIRS_SHARE):
                return self.left_s() <= 0
            original = self.scratch.read(first.function.path)
            base = replace_line(original, first.scored.edit)
            edit = self.usable(base, second.scored.edit)
            if edit is None:
                continue
            tried += 1
            edits = tuple(sorted((first.scored.edit, edit), key=lambda e: e.line))
            if await self.attempt(first.function, edits, original) is None:
                return True
        return False
