"""Candidates are tried in a scratch copy: the real workspace is never touched."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from protoagent.checks.types import CheckSpec
from protoagent.processes.runner import ProcessRegistry
from protoagent.processes.sandbox import select_sandbox
from protoagent.repair.scratch import ScratchWorkspace

from .support import FIXED_LINE, OLD_LINE, PRICES, repo

PYTEST = CheckSpec("pytest", (sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"))


def test_scratch_runs_never_change_the_real_workspace(tmp_path: Path) -> None:
    root = repo(tmp_path, git=True)
    before = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    with ScratchWorkspace(root, sys.executable, select_sandbox("auto"), processes=ProcessRegistry()) as scratch:
        assert not (scratch.root / ".git").exists()
        failing = asyncio.run(scratch.run(PYTEST, 60))
        scratch.write("prices.py", PRICES.replace(OLD_LINE, FIXED_LINE))
        passing = asyncio.run(scratch.run(PYTEST, 60))
        copy = scratch.root
    assert (failing.passed, failing.outcome) == (False, "failed")
    assert (passing.passed, passing.outcome) == (True, "passed")
    assert not copy.exists()
    after = {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert after == before


def test_environment_folders_are_linked_not_copied(tmp_path: Path) -> None:
    root = repo(tmp_path)
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "marker").write_text("x")
    with ScratchWorkspace(root, sys.executable, processes=ProcessRegistry()) as scratch:
        linked = scratch.root / ".venv"
        assert linked.is_symlink() and (linked / "bin" / "marker").read_text() == "x"
        assert (scratch.root / "prices.py").read_text() == PRICES
