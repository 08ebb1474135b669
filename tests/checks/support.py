"""Helpers shared by the checks tests: write a temporary repository and read a plan."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from protoagent.checks import CheckPlan, CheckSpec
from protoagent.testing import make_repo

PYTHON = sys.executable
"""The interpreter passed to discovery explicitly, so tests do not depend on selection."""


def write_repo(root: Path, files: Mapping[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``root`` without git."""
    return make_repo(root, files, git=False)


def make_executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    """Write an executable file (parents created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)
    return path


def only_check(plan: CheckPlan) -> CheckSpec:
    """The single check of a plan (fails loudly when there are several)."""
    assert len(plan.checks) == 1, plan.check_ids
    return plan.checks[0]


def fake_venv(directory: Path, target: str = sys.executable) -> Path:
    """A virtual environment shape: pyvenv.cfg and bin/python as a symlink to ``target``."""
    (directory / "bin").mkdir(parents=True)
    (directory / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    link = directory / "bin" / "python"
    os.symlink(target, link)
    return link
