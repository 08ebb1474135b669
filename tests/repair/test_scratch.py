"""Candidates are tried in a scratch copy: the real workspace is never touched, and a check there
imports the copy's source even where the environment installs the workspace's by path."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.checks.types import CheckSpec
from protoagent.processes.runner import ProcessRegistry
from protoagent.processes.sandbox import select_sandbox
from protoagent.repair.copy_imports import import_roots
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


SRC_MODULE = "def double(x):\n    return x * 2\n"
SRC_TEST = "import unittest\n\nfrom pkg.mod import double\n\n\nclass T(unittest.TestCase):\n"
SRC_TEST += "    def test_double(self):\n        self.assertEqual(double(2), 4)\n"


def _src_layout(tmp_path: Path, pth: str) -> tuple[Path, CheckSpec]:
    """A ``src/`` project whose virtual environment installs it by a ``.pth`` line (``pth`` with
    ``{root}`` for the workspace), as ``pip install -e .`` or a hand-made path file does."""
    root = tmp_path / "work"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "src" / "pkg" / "mod.py").write_text(SRC_MODULE)
    (root / "tests" / "test_mod.py").write_text(SRC_TEST)
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    [site] = (root / ".venv").glob("lib/python*/site-packages")
    (site / "_project.pth").write_text(pth.format(root=root) + "\n")
    python = str(root / ".venv" / "bin" / "python")
    check = CheckSpec(id="unittest", argv=(python, "-m", "unittest", "discover", "-s", "tests", "-t", "."))
    return root, check


@pytest.mark.parametrize("pth", ["../../../../src", "{root}/src"])
def test_a_check_in_the_copy_imports_the_copys_source_not_the_workspaces(tmp_path: Path, pth: str) -> None:
    root, check = _src_layout(tmp_path, pth)
    with ScratchWorkspace(root, check.argv[0], select_sandbox("auto"), processes=ProcessRegistry()) as scratch:
        before = asyncio.run(scratch.run(check, 60))
        scratch.write("src/pkg/mod.py", SRC_MODULE.replace("x * 2", "x * 3"))
        broken = asyncio.run(scratch.run(check, 60))
    assert (before.passed, broken.passed, broken.outcome) == (True, False, "failed"), broken.output
    assert (root / "src" / "pkg" / "mod.py").read_text() == SRC_MODULE


def test_an_editable_finder_names_the_folder_that_holds_its_package(tmp_path: Path) -> None:
    root = tmp_path / "work"
    site = root / "env" / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    (root / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    finder = f"MAPPING: dict[str, str] = {{'pkg': '{root}/lib/pkg', 'other': '/elsewhere/other'}}\n"
    (site / "__editable___pkg_0_1_finder.py").write_text(finder)
    (site / "outside.pth").write_text("/elsewhere/src\nimport os\n# a comment\n")
    assert import_roots(str(root / "env" / "bin" / "python"), root) == ["lib"]
    assert import_roots(sys.executable, root) == []  # not an environment of the workspace
