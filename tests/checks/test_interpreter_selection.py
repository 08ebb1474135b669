"""Interpreter selection: the project's environment, then the user's active one, then python3 on
the user's PATH — never ProtoAgent's own interpreter for its own sake; paths only."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from protoagent.checks import discover_checks, select_interpreter

from .support import fake_venv, make_executable, write_repo


def test_project_venv_comes_first(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / "repo/.venv")
    active = fake_venv(tmp_path / "active")
    chosen = select_interpreter(tmp_path / "repo", environ={"VIRTUAL_ENV": str(active.parent.parent)})
    assert (chosen.path, chosen.source) == (str(link), "project-venv")


def test_plain_venv_folder_is_a_project_environment(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / "venv")
    chosen = select_interpreter(tmp_path, environ={})
    assert (chosen.path, chosen.source) == (str(link), "project-venv")


def test_poetry_environment_of_the_project_is_found_statically(tmp_path: Path) -> None:
    write_repo(tmp_path / "repo", {"pyproject.toml": '[tool.poetry]\nname = "Date_Parser"\n'})
    link = fake_venv(tmp_path / "home/.cache/pypoetry/virtualenvs/date-parser-AbC123-py3.11")
    chosen = select_interpreter(tmp_path / "repo", environ={}, home=tmp_path / "home")
    assert (chosen.path, chosen.source) == (str(link), "project-venv")
    assert "Poetry" in chosen.reason


def test_hatch_environment_of_the_project_is_found_statically(tmp_path: Path) -> None:
    write_repo(tmp_path / "repo", {"pyproject.toml": '[project]\nname = "dates"\n'})
    link = fake_venv(tmp_path / "home/.local/share/hatch/env/virtual/dates/x1Y2/dates")
    chosen = select_interpreter(tmp_path / "repo", environ={}, home=tmp_path / "home")
    assert (chosen.path, chosen.source) == (str(link), "project-venv")


def test_venv_symlink_spelling_is_preserved(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / ".venv")
    chosen = select_interpreter(tmp_path, environ={})
    assert chosen.path == str(tmp_path / ".venv/bin/python") == str(link)
    assert os.path.islink(chosen.path)
    assert chosen.path != os.path.realpath(chosen.path)


def test_venv_without_pyvenv_cfg_is_ignored(tmp_path: Path) -> None:
    make_executable(tmp_path / ".venv/bin/python")
    chosen = select_interpreter(tmp_path, environ={"PATH": str(tmp_path / "nothing")})
    assert chosen.source == "none"
    assert ".venv ignored: it has no pyvenv.cfg" in chosen.reason


def test_virtual_env_variable_is_the_active_environment(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / "env")
    chosen = select_interpreter(tmp_path / "repo", environ={"VIRTUAL_ENV": str(tmp_path / "env")})
    assert (chosen.path, chosen.source) == (str(link), "active-env")


def test_conda_prefix_is_an_active_environment(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / "conda")
    chosen = select_interpreter(tmp_path / "repo", environ={"CONDA_PREFIX": str(tmp_path / "conda")})
    assert (chosen.path, chosen.source) == (str(link), "active-env")


def test_python3_on_the_users_path_is_the_fallback(tmp_path: Path) -> None:
    python3 = make_executable(tmp_path / "userbin/python3")
    chosen = select_interpreter(tmp_path, environ={"PATH": f"relative/bin{os.pathsep}{python3.parent}"})
    assert (chosen.path, chosen.source) == (str(python3), "user-path")


def test_interpreter_selection_never_borrows_protoagents_own_install(tmp_path: Path) -> None:
    # ProtoAgent runs in its own environment (sys.prefix); with nothing in the project and no
    # active environment, the user's PATH decides, not the interpreter running this code.
    elsewhere = make_executable(tmp_path / "userbin/python3")
    chosen = select_interpreter(tmp_path, environ={"PATH": str(elsewhere.parent)})
    assert chosen.path == str(elsewhere)
    assert chosen.path != sys.executable and not chosen.path.startswith(sys.prefix)
    nothing = select_interpreter(tmp_path, environ={"PATH": str(tmp_path / "empty")})
    assert (nothing.path, nothing.source) == ("python3", "none")


def test_discovery_uses_the_project_venv_by_default(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / ".venv")
    write_repo(tmp_path, {"tests/test_dates.py": "def test_x():\n    pass\n"})
    plan = discover_checks(tmp_path)
    assert plan.checks[0].argv[0] == str(link)


def test_project_without_any_interpreter_reports_the_check_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)
    write_repo(tmp_path / "repo", {"tests/test_dates.py": "def test_x():\n    pass\n"})
    plan = discover_checks(tmp_path / "repo")
    assert plan.checks[0].runner_unavailable is not None
