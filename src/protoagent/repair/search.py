"""The candidate search of a guided repair: every ranked line shallowly, pairs, then deeper.

The search walks the localized functions in passes (``PASSES``): the first ``SHALLOW``
candidates of the best-ranked lines of every function (``repair.ranking`` orders the lines),
then of their other lines, so a bug far from the error, or in the third function, is reached
before the budget is spent on one line. After each shallow pass, when no single line passed,
pairs of lines of the same function: two candidates that each
moved the failure (the failing check still fails, with another message) are tried together,
the two-line fixes (a condition and its return, two swapped assignments). Then the deep pass:
the rest of every line's candidates. Every candidate runs the failing checks first, then the
others, in the scratch copy; a candidate that copies the test's expected value into the source, or
that was cut down to a no-op, is never run. The whole search is bounded by the same candidate count and seconds.
"""

from __future__ import annotations

import ast
import asyncio
import itertools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field

from protoagent.checks.types import CheckSpec
from protoagent.repair.candidates import CandidateEdit, CandidateSource, focus_on
from protoagent.repair.edits import code_prefix, copies_expected_value, replace_line
from protoagent.repair.localize import Localization, SourceFunction, assertion_message
from protoagent.repair.operator_search import OperatorPhase, operators_enabled
from protoagent.repair.scratch import ScratchWorkspace

MAX_CHECK_SECONDS = 30.0
"""A scratch check that runs longer than this counts as failing."""
SHALLOW = 2
"""Candidates per line (in the model's order) in the shallow passes."""
FIRST_LINES = 8
"""Best-ranked lines of each function in the first pass (so a third function is reached)."""
PASSES: tuple[tuple[slice, int, int | None], ...] = (
    (slice(0, FIRST_LINES), 0, SHALLOW),
    (slice(FIRST_LINES, None), 0, SHALLOW),
    (slice(None), SHALLOW, None),
)
"""(ranked lines, candidates skipped per line, candidates taken per line): the first lines of
every function, then their other lines, each shallowly, then every line deeply."""
MAX_PAIRS = 12
"""Pairs tried, at most, after the first pass."""

Candidate = tuple[CandidateEdit, ...]
"""One edit, or two edits of different lines of the same function."""


@dataclass(slots=True)
class Tried:
    """A single candidate that ran and failed, and whether it moved the failure."""

    edit: CandidateEdit
    function: SourceFunction
    moved: bool


@dataclass(slots=True)
class SearchState:
    """What the search has spent and found."""

    started: float
    candidates: int
    seconds: float
    tried: int = 0
    proposed: int = 0
    passed: Candidate = ()
    reason: str = "no candidate passed the checks"
    out_of_budget: bool = False
    seen: set[tuple[tuple[str, int, str], ...]] = field(default_factory=set)
    last_output: str = ""
    """The output of the latest candidate's failing check."""
    singles: list[Tried] = field(default_factory=list)

    def left_s(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def spent(self) -> bool:
        if self.tried >= self.candidates or self.left_s() <= 0:
            self.out_of_budget = True
            self.reason = f"the budget ran out ({self.tried} candidates, {self.seconds:g} s)"
        return self.out_of_budget


Record = Callable[[int, Candidate, str | None], None]
"""Records one tried candidate: its index, its edits and the check it failed (``None``: passed)."""


@dataclass(slots=True)
class Search:
    scratch: ScratchWorkspace
    localization: Localization
    source: CandidateSource
    checks: Sequence[CheckSpec]
    state: SearchState
    record: Record

    async def run(self) -> SearchState:
        operators = OperatorPhase(
            self.scratch,
            self.localization,
            self.checks,
            self._try,
            self._usable,
            self.state.left_s,
            self.state.seconds,
            lambda: self.state.last_output,
            self.scratch.options.failing.get(self.checks[0].id, "") if self.checks else "",
        )
        if operators_enabled() and (await operators.run() or self.state.spent()):
            return self.state
        for lines, skip, take in PASSES:
            for function in self.localization.functions:
                if await self._singles(function, lines, skip, take):
                    return self.state
            if take is not None and await self._pairs():
                return self.state
        return self.state

    async def _singles(self, function: SourceFunction, lines: slice, skip: int, take: int | None) -> bool:
        """One pass over ``function``'s lines; ``True`` when the search is over (passed or spent)."""
        if self.state.out_of_budget:
            return True
        if not function.ranked[lines]:
            return False
        original = self.scratch.read(function.path)
        proposals = self.source.propose(focus_on(self.localization, function, skip, take, lines))
        try:
            while True:
                edit = await _next_within(proposals, self.state.left_s())
                if edit is None:
                    return self.state.spent()  # the model had no more, or its next line came too late
                self.state.proposed += 1
                if self.state.spent():
                    return True
                usable = self._usable(original, edit)
                if usable is None:
                    continue
                verdict = await self._try(function, (usable,), original)
                if verdict is None:
                    return True
                self.state.singles.append(Tried(usable, function, verdict))
        finally:
            await _close(proposals)
        return False

    def _usable(self, original: str, edit: CandidateEdit) -> CandidateEdit | None:
        """The edit cut to its code, when it may run: not a no-op, not the test's expected value."""
        usable = code_prefix(original, edit)
        if usable is None or no_op(usable) or copies_expected_value(usable, self.localization, original):
            return None
        return usable

    async def _pairs(self) -> bool:
        """Two moved singles of different lines of one function, together."""
        moved = [t for t in self.state.singles if t.moved]
        pairs = [
            (a, b)
            for a, b in itertools.combinations(moved, 2)
            if a.function is b.function and a.edit.line != b.edit.line and _key((a.edit, b.edit)) not in self.state.seen
        ][:MAX_PAIRS]
        for first, second in pairs:
            if self.state.spent():
                return True
            original = self.scratch.read(first.edit.path)
            edits = tuple(sorted((first.edit, second.edit), key=lambda e: e.line))
            if await self._try(first.function, edits, original) is None:
                return True
        return False

    async def _try(self, function: SourceFunction, edits: Candidate, original: str) -> bool | None:
        """Run the checks with ``edits`` in place: ``None`` when every check passed, else
        whether the failure moved. A repeat is not run (it counts as not moved)."""
        key = _key(edits)
        if key in self.state.seen or self.state.spent():
            return False
        self.state.seen.add(key)
        text = original
        for edit in edits:
            text = replace_line(text, edit)
        self.state.tried += 1
        self.scratch.write(function.path, text)
        try:
            failed, output = await _run_checks(self.scratch, self.checks, self.state.left_s())
        finally:
            self.scratch.write(function.path, original)
        self.record(self.state.tried, edits, failed)
        self.state.last_output = output
        if failed is None:
            self.state.passed = edits
            self.state.reason = f"candidate {self.state.tried} passed every selected check in the scratch copy"
            return None
        return assertion_message(output) not in ("", self.localization.message)


def _key(edits: Candidate) -> tuple[tuple[str, int, str], ...]:
    return tuple(sorted((e.path, e.line, e.new) for e in edits))


def no_op(edit: CandidateEdit) -> bool:
    """A line cut down to nothing that could fix anything: a bare name or attribute as a
    statement, or a bare ``return`` in place of one that returned a value."""
    try:
        new, old = ast.parse(edit.new.strip()).body, ast.parse(edit.old.strip()).body
    except SyntaxError:
        return False  # the line opens a block (``if ...:``): it parses only in its file
    if len(new) != 1:
        return False
    statement = new[0]
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Name | ast.Attribute | ast.Constant):
        return True
    returned = len(old) == 1 and isinstance(old[0], ast.Return) and old[0].value is not None
    return isinstance(statement, ast.Return) and statement.value is None and returned


async def _next_within(proposals: AsyncIterator[CandidateEdit], left_s: float) -> CandidateEdit | None:
    """The source's next edit, or ``None`` when it has no more or it does not come within
    ``left_s`` (a model on a busy machine may take longer for one line than the search has left)."""
    try:
        return await asyncio.wait_for(anext(proposals), max(0.0, left_s))
    except (StopAsyncIteration, TimeoutError):
        return None


async def _close(proposals: AsyncIterator[CandidateEdit]) -> None:
    """Stop a source early (its model work ends with it)."""
    close = getattr(proposals, "aclose", None)
    if close is not None:
        await close()


async def _run_checks(scratch: ScratchWorkspace, checks: Sequence[CheckSpec], left_s: float) -> tuple[str | None, str]:
    """The first check that does not pass with the candidate in place and its output, or
    ``(None, "")`` when all pass."""
    for check in checks:
        run = await scratch.run(check, max(1.0, min(MAX_CHECK_SECONDS, left_s)))
        if not run.passed:
            return check.id, run.output
    return None, ""
