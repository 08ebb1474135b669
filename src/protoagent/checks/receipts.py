"""Check receipts: the structured result of one ``run_check`` call and the dependency
revisions that tie it to the exact file contents it measured.

The receipt's keys are a contract read by :mod:`protoagent.workflow.evidence` and the workflow
graph: ``check_id``, ``phase``, ``outcome``, ``exit_code``, ``tests_run``,
``dependency_revisions``, ``argv``, ``cwd``, ``duration_s``, ``artifact``,
``unavailable_reason``, ``failed_tests``, ``changed_tracked_files`` and, only when a runner
changed, ``changed_runner_files``. The receipt is written once (:meth:`CheckReceipt.to_output`)
and read back once (:meth:`CheckReceipt.from_data` for the data, :func:`split_receipt` for the
text a model saw), so the workflow's evidence holds the same typed receipt the tool returned.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from protoagent.checks.executables import beneath_root
from protoagent.checks.failures import MAX_FAILED_TESTS
from protoagent.checks.inventory import DependencyInventory, list_root, walk_files
from protoagent.checks.outcomes import Outcome
from protoagent.checks.output_excerpt import check_output_excerpt
from protoagent.checks.types import MAX_DEPENDENCY_FILES, CheckPlan, CheckSpec
from protoagent.tools.base import ToolOutput
from protoagent.workspace.confined import digest_regular

SOURCE_SUFFIXES = (".py", ".rs", ".js", ".ts")
"""Files beneath a declared dependency directory that enter revision capture."""

ROOT_TEST_DIRECTORIES = ("test", "tests")
"""Folders a root discovery command recurses into once tests move there from the root."""

COMPLETED_OUTCOMES = frozenset({"passed", "failed"})
"""Outcomes of a check that ran to a verdict."""

ChangedFiles = Callable[[], Iterable[str]]
"""The session service ``changed_files``: the paths this run changed so far."""


@dataclass(frozen=True, slots=True)
class CheckReceipt:
    """What one ``run_check`` call measured (or why it measured nothing)."""

    check_id: str
    phase: str
    outcome: Outcome
    exit_code: int | None
    tests_run: int | None
    dependency_revisions: dict[str, str]
    """Workspace-relative path → SHA-256 hex of the file's bytes, captured right after the run."""
    argv: tuple[str, ...]
    cwd: str
    duration_s: float
    artifact: str | None
    """The full output journal (``None`` when nothing ran)."""
    unavailable_reason: str | None = None
    failed_tests: tuple[str, ...] = ()
    """The failing test ids the runner named; the model sees them before any output excerpt."""
    changed_tracked_files: tuple[str, ...] = ()
    """Tracked files whose revision the run itself changed (see :mod:`protoagent.checks.tracked`)."""
    changed_runner_files: tuple[str, ...] = ()
    """Runner files (executable, interpreter) that differ from the session's first revisions."""

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> CheckReceipt | None:
        """The receipt a ``run_check`` result's data holds, or ``None`` when it holds none (a
        denied or rejected call). Tolerant of older logs: a missing key takes its default."""
        check_id = data.get("check_id")
        if not isinstance(check_id, str):
            return None
        tests_run, exit_code = data.get("tests_run"), data.get("exit_code")
        return cls(
            check_id=check_id,
            phase=str(data.get("phase") or ""),
            outcome=cast(Outcome, str(data.get("outcome") or "error")),
            exit_code=exit_code if isinstance(exit_code, int) else None,
            tests_run=tests_run if isinstance(tests_run, int) else None,
            dependency_revisions={str(k): str(v) for k, v in (data.get("dependency_revisions") or {}).items()},
            argv=tuple(str(a) for a in data.get("argv") or ()),
            cwd=str(data.get("cwd") or ""),
            duration_s=float(data.get("duration_s") or 0.0),
            artifact=str(data["artifact"]) if data.get("artifact") is not None else None,
            unavailable_reason=data.get("unavailable_reason"),
            failed_tests=tuple(str(t) for t in data.get("failed_tests") or ()),
            changed_tracked_files=tuple(str(f) for f in data.get("changed_tracked_files") or ()),
            changed_runner_files=tuple(str(f) for f in data.get("changed_runner_files") or ()),
        )

    def to_data(self) -> dict[str, Any]:
        """The receipt as ``ToolOutput.data``: exactly the contract's keys."""
        runner = {"changed_runner_files": list(self.changed_runner_files)} if self.changed_runner_files else {}
        return {
            "check_id": self.check_id,
            "phase": self.phase,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "tests_run": self.tests_run,
            "dependency_revisions": dict(self.dependency_revisions),
            "argv": list(self.argv),
            "cwd": self.cwd,
            "duration_s": self.duration_s,
            "artifact": self.artifact,
            "unavailable_reason": self.unavailable_reason,
            "failed_tests": list(self.failed_tests),
            "changed_tracked_files": list(self.changed_tracked_files),
            **runner,
        }

    def header(self) -> str:
        """``check <id> <phase>: <outcome> (exit N, M tests)``."""
        code = "no exit code" if self.exit_code is None else f"exit {self.exit_code}"
        tests = "tests not counted" if self.tests_run is None else f"{self.tests_run} tests"
        return f"check {self.check_id} {self.phase}: {self.outcome} ({code}, {tests})"

    def to_output(self, body: str = "", note: str | None = None) -> ToolOutput:
        """The tool result: the header, an optional note, then the bounded output ``body``."""
        lines = [self.header()]
        if self.failed_tests:
            # First, so a long assertion diff in the excerpt can never push the names out.
            lines.append(FAILING_TESTS + shown_tests(self.failed_tests))
        if note:
            lines.append(f"{NOTE}{note}")
        if self.unavailable_reason and self.unavailable_reason != note:
            lines.append(f"{UNAVAILABLE}{self.unavailable_reason}")
        if self.changed_tracked_files:
            changed = ", ".join(self.changed_tracked_files)
            lines.append(f"{CHANGED_TRACKED}{changed} (the check changed them; they are not edits)")
        text = "\n".join(lines)
        if body:
            text = f"{text}\n{body}"
        # A check that ran to its verdict worked, failing or not: the header says "failed", and only a
        # check that could not measure (unavailable, timed out, stopped) is a tool error.
        status: Literal["ok", "error"] = "ok" if self.outcome in COMPLETED_OUTCOMES else "error"
        return ToolOutput(text, status=status, data=self.to_data(), artifact=self.artifact)


FAILING_TESTS, NOTE, UNAVAILABLE = "failing tests: ", "note: ", "unavailable: "
CHANGED_TRACKED = "changed tracked files: "
RECEIPT_DETAIL_PREFIXES = (FAILING_TESTS, NOTE, UNAVAILABLE, CHANGED_TRACKED)
"""Lines a check receipt puts under its header, before the command's output."""
RESULT_OUTPUT_CHARS = 1500
"""Characters of a receipt's command output an excerpt keeps (its header lines stay whole)."""


def split_receipt(text: str) -> tuple[list[str], str]:
    """A ``run_check`` result as (header lines, command output): the header is the receipt's
    ``check <id> <phase>: <outcome> (...)`` line and the detail lines under it."""
    lines = text.splitlines()
    if not lines or not lines[0].removeprefix("error: ").startswith("check "):
        return [], text
    header = [lines[0].removeprefix("error: ")]
    rest = lines[1:]
    while rest and rest[0].startswith(RECEIPT_DETAIL_PREFIXES):
        header.append(rest.pop(0))
    return header, "\n".join(rest)


def receipt_excerpt(text: str, limit: int = RESULT_OUTPUT_CHARS) -> str:
    """The receipt's header lines whole, then at most ``limit`` characters of its output (a
    failure report's tracebacks and summary first, its warnings cut first): a long assertion diff
    can never push the check's outcome or its failing tests out of the excerpt."""
    header, body = split_receipt(text)
    body = check_output_excerpt(body, limit)
    return "\n".join([*header, body] if body else header)


MAX_TESTS_SHOWN = 12
"""Failing test ids a receipt's text names; the rest are counted (the data keeps every id)."""


def shown_tests(tests: Sequence[str], limit: int = MAX_TESTS_SHOWN) -> str:
    """``a, b, c`` or, past ``limit``, the first ones and ``… and N more (M failing)``; a list the
    parser capped at ``MAX_FAILED_TESTS`` says ``M or more``, since more may have failed."""
    if len(tests) <= limit:
        return ", ".join(tests)
    total = f"{len(tests)} or more" if len(tests) >= MAX_FAILED_TESTS else str(len(tests))
    return f"{', '.join(tests[:limit])} … and {len(tests) - limit} more ({total} failing)"


def revision_files(
    root: Path, check: CheckSpec, plan: CheckPlan, changed: Sequence[str] = (), limit: int = MAX_DEPENDENCY_FILES
) -> tuple[str, ...]:
    """The workspace-relative files whose revisions a receipt of ``check`` records, at most
    ``limit``: files this run changed first (so staleness of an edit is never cut off), then the
    check's declared paths (source files beneath directories), the tests a root discovery
    command finds today, then the plan's dependency files."""
    inventory = DependencyInventory(limit)
    for path in changed:
        _add_file(inventory, root, path)
    for path in check.paths:
        _add_declared(inventory, root, path)
    if check.id in plan.bootstrap_checks or discovers_from_root(check):
        # Tests created or moved during the run (root test_*.py, a tests/ package) are measured by
        # the frozen root command, so their current revisions belong to its receipt.
        for name in root_test_files(root):
            inventory.add(name)
        for folder in ROOT_TEST_DIRECTORIES:
            _add_declared(inventory, root, folder)
    for path in plan.dependency_files:
        _add_file(inventory, root, path)
    return inventory.files()


def discovers_from_root(check: CheckSpec) -> bool:
    """True for a ``unittest discover`` command that starts at the workspace root."""
    argv = list(check.argv)
    if "discover" not in argv or check.cwd not in ("", "."):
        return False
    options = argv[argv.index("discover") + 1 :]
    flags = [i for i, arg in enumerate(options[:-1]) if arg in ("-s", "--start-directory")]
    start = options[flags[0] + 1] if flags else "."
    return start in (".", "./")


def dependency_revisions(
    root: Path, check: CheckSpec, plan: CheckPlan, changed: ChangedFiles | None = None
) -> dict[str, str]:
    """SHA-256 digests of :func:`revision_files`; files that cannot be read are left out."""
    paths = [workspace_relative(root, path) for path in changed()] if changed is not None else []
    revisions: dict[str, str] = {}
    for rel in revision_files(root, check, plan, [p for p in paths if p is not None]):
        digest = file_digest(root / rel)
        if digest is not None:
            revisions[rel] = digest
    return revisions


def root_test_files(root: Path) -> list[str]:
    """The root ``test_*.py`` files, sorted (the bootstrap runner's regressions)."""
    return sorted(name for name in list_root(root).files if name.startswith("test_") and name.endswith(".py"))


def workspace_relative(root: Path, path: str) -> str | None:
    """``path`` (absolute or relative) as a normalised workspace-relative path, or ``None`` outside."""
    if os.path.isabs(path):
        absolute = os.path.normpath(path)
        if os.path.commonpath([absolute, str(root)]) != str(root) or absolute == str(root):
            return None
        path = os.path.relpath(absolute, root)
    return beneath_root(root, path)


def file_digest(path: Path) -> str | None:
    """SHA-256 hex of the file's bytes, or ``None`` when it is not a readable regular file."""
    return digest_regular(path)


def _add_file(inventory: DependencyInventory, root: Path, path: str) -> None:
    rel = beneath_root(root, path)
    if rel is not None and (root / rel).is_file():
        inventory.add(rel)


def _add_declared(inventory: DependencyInventory, root: Path, path: str) -> None:
    rel = beneath_root(root, path)
    if rel is None:
        return
    full = root / rel
    if full.is_file():
        inventory.add(rel)
    elif full.is_dir():
        for found in walk_files(root, rel):
            if inventory.full:
                inventory.truncated = True
                return
            if found.endswith(SOURCE_SUFFIXES):
                inventory.add(found)
