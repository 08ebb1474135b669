"""Interpreter selection: project .venv, then the active environment, then the runtime; paths only."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from protoagent.checks import discover_checks, select_interpreter

from .support import fake_venv, make_executable, write_repo

NOT_IN_VENV = {"prefix": sys.base_prefix, "base_prefix": sys.base_prefix}


def test_project_venv_comes_first(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / "repo/.venv")
    active = fake_venv(tmp_path / "active")
    chosen = select_interpreter(
        tmp_path / "repo",
        sys.executable,
        environ={"VIRTUAL_ENV": str(active.parent.parent)},
        prefix="/x",
        base_prefix="/y",
    )
    assert (chosen.path, chosen.source) == (str(link), "project-venv")


def test_venv_symlink_spelling_is_preserved(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / ".venv")
    chosen = select_interpreter(tmp_path, sys.executable, environ={}, **NOT_IN_VENV)
    assert chosen.path == str(tmp_path / ".venv/bin/python") == str(link)
    assert os.path.islink(chosen.path)
    assert chosen.path != os.path.realpath(chosen.path)


def test_venv_without_pyvenv_cfg_is_ignored(tmp_path: Path) -> None:
    make_executable(tmp_path / ".venv/bin/python")
    chosen = select_interpreter(tmp_path, sys.executable, environ={}, **NOT_IN_VENV)
    assert chosen.source == "runtime"
    assert ".venv ignored: it has no pyvenv.cfg" in chosen.reason


def test_virtual_env_variable_is_the_active_environment(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / "env")
    chosen = select_interpreter(tmp_path / "repo", sys.executable, environ={"VIRTUAL_ENV": str(tmp_path / "env")})
    assert (chosen.path, chosen.source) == (str(link), "active-env")


def test_running_virtual_environment_uses_the_host_interpreter(tmp_path: Path) -> None:
    host = make_executable(tmp_path / "env/bin/python3")
    chosen = select_interpreter(tmp_path, str(host), environ={}, prefix=str(tmp_path / "env"), base_prefix="/usr")
    assert (chosen.path, chosen.source) == (str(host), "active-env")


def test_runtime_python_is_the_fallback(tmp_path: Path) -> None:
    chosen = select_interpreter(tmp_path, sys.executable, environ={}, **NOT_IN_VENV)
    assert (chosen.path, chosen.source) == (sys.executable, "runtime")


def test_host_binary_is_excluded(tmp_path: Path) -> None:
    frozen = make_executable(tmp_path / "dist/protoagent")
    chosen = select_interpreter(tmp_path, str(frozen), host_binary=str(frozen), environ={}, **NOT_IN_VENV)
    assert chosen.path != str(frozen)
    assert f"host binary {frozen} excluded" in chosen.reason


def test_embedding_binary_in_a_loaded_environment_uses_that_environment(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / "env")
    embedder = make_executable(tmp_path / "bin/proto-cli")
    chosen = select_interpreter(
        tmp_path / "repo", str(embedder), environ={}, prefix=str(tmp_path / "env"), base_prefix=sys.base_prefix
    )
    assert (chosen.path, chosen.source) == (str(link), "active-env")


def test_host_binary_named_like_python_is_still_excluded(tmp_path: Path) -> None:
    venv_python = fake_venv(tmp_path / ".venv")
    chosen = select_interpreter(tmp_path, sys.executable, host_binary=str(venv_python), environ={}, **NOT_IN_VENV)
    assert chosen.path != str(venv_python)
    assert chosen.source == "runtime"


def test_discovery_uses_the_project_venv_by_default(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / ".venv")
    write_repo(tmp_path, {"tests/test_dates.py": "def test_x():\n    pass\n"})
    plan = discover_checks(tmp_path)
    assert plan.checks[0].argv[0] == str(link)
