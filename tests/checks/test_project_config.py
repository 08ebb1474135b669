"""``.protoagent/project.json``: precedence, snapshot semantics and refusals that name file, field and fix."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from protoagent.checks import (
    PROJECT_CONFIG_PATH,
    ProjectConfigError,
    load_project_config,
    plan_checks,
)
from protoagent.errors import ConfigError

from .support import PYTHON, make_executable, only_check, write_repo

PYTEST_SUITE = {"tests/test_dates.py": "import pytest\n"}


def write_config(root: Path, document: Any) -> Path:
    text = document if isinstance(document, str) else json.dumps(document)
    return write_repo(root, {PROJECT_CONFIG_PATH: text})


def refusal(root: Path) -> ProjectConfigError:
    with pytest.raises(ProjectConfigError) as caught:
        load_project_config(root)
    error = caught.value
    assert isinstance(error, ConfigError)
    assert error.file == str(root / PROJECT_CONFIG_PATH)
    assert str(error).startswith(f"{root / PROJECT_CONFIG_PATH}: {error.field}: ")
    assert f"Fix: {error.fix}" in str(error)
    return error


def test_project_config_takes_precedence_over_discovery(tmp_path: Path) -> None:
    make_executable(tmp_path / ".venv/bin/python")
    write_repo(tmp_path, PYTEST_SUITE)
    argv = [".venv/bin/python", "-m", "pytest", "tests", "-q"]
    write_config(tmp_path, {"checks": [{"id": "regression", "argv": argv, "paths": ["tests"]}]})
    plan = plan_checks(tmp_path, python=PYTHON)
    check = only_check(plan)
    assert (check.id, check.argv, check.cwd, dict(check.env)) == ("regression", tuple(argv), ".", {})
    assert check.source == "config"
    assert check.runner_unavailable is None
    assert plan.config_path == PROJECT_CONFIG_PATH
    assert plan.dependency_files == ("tests/test_dates.py",)


def test_empty_checks_disable_discovery_and_bootstrap(tmp_path: Path) -> None:
    write_repo(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n", **PYTEST_SUITE})
    write_config(tmp_path, {"checks": []})
    plan = plan_checks(tmp_path, python=PYTHON)
    assert plan.checks == ()
    assert plan.bootstrap_checks == ()
    assert plan.config_path == PROJECT_CONFIG_PATH


def test_config_without_checks_leaves_discovery_on(tmp_path: Path) -> None:
    write_repo(tmp_path, PYTEST_SUITE)
    write_config(tmp_path, {"other_setting": True})
    plan = plan_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("pytest",)
    assert plan.config_path is None
    assert plan.notes[0] == f"{PROJECT_CONFIG_PATH} sets no checks; discovery was used"


def test_config_is_a_snapshot_read_once(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": [{"id": "a", "argv": ["/bin/true"]}]})
    snapshot = load_project_config(tmp_path)
    write_config(tmp_path, {"checks": [{"id": "b", "argv": ["/bin/false"]}]})
    assert snapshot is not None and snapshot.checks is not None
    assert snapshot.checks[0].id == "a"
    with pytest.raises(dataclasses.FrozenInstanceError):
        snapshot.checks[0].argv = ("/bin/false",)  # type: ignore[misc]
    with pytest.raises(TypeError):
        snapshot.checks[0].env["PATH"] = "/bin"  # type: ignore[index]


def test_malformed_json_names_file_position_and_fix(tmp_path: Path) -> None:
    write_config(tmp_path, '{"checks": [\n  {"id": "a",}\n]}')
    error = refusal(tmp_path)
    assert error.field == "(file)"
    assert "line 2" in error.problem
    assert "correct the JSON syntax" in error.fix


def test_missing_argv_names_the_field(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": [{"id": "a", "argv": ["/bin/true"]}, {"id": "b"}]})
    error = refusal(tmp_path)
    assert error.field == "checks[1].argv"
    assert "JSON array" in error.fix


def test_checks_that_are_not_a_list_are_refused(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": {"id": "a", "argv": ["/bin/true"]}})
    error = refusal(tmp_path)
    assert error.field == "checks"
    assert error.problem == "must be a list, got an object"


def test_bare_executable_without_env_path_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": [{"id": "tests", "argv": ["pytest", "-q"]}]})
    error = refusal(tmp_path)
    assert error.field == "checks[0].argv[0]"
    assert "env.PATH" in error.problem
    assert ".venv/bin/pytest" in error.fix


def test_duplicate_check_ids_are_refused(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": [{"id": "t", "argv": ["/bin/true"]}, {"id": "t", "argv": ["/bin/true"]}]})
    error = refusal(tmp_path)
    assert error.field == "checks[1].id"
    assert "checks[0]" in error.problem


def test_executable_outside_the_workspace_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": [{"id": "t", "argv": ["../elsewhere/run"]}]})
    assert refusal(tmp_path).field == "checks[0].argv[0]"


def test_unknown_check_field_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": [{"id": "t", "args": ["/bin/true"]}]})
    error = refusal(tmp_path)
    assert error.field == "checks[0].args"
    assert "id, argv, cwd, env, paths" in error.fix


def test_missing_cwd_directory_is_refused(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": [{"id": "t", "argv": ["/bin/true"], "cwd": "frontend"}]})
    assert refusal(tmp_path).field == "checks[0].cwd"


def test_bare_executable_is_found_through_explicit_env_path(tmp_path: Path) -> None:
    make_executable(tmp_path / "tools/bin/runtests")
    write_config(tmp_path, {"checks": [{"id": "t", "argv": ["runtests"], "env": {"PATH": "tools/bin"}}]})
    config = load_project_config(tmp_path)
    assert config is not None and config.checks is not None
    assert config.checks[0].runner_unavailable is None


def test_missing_configured_runner_is_marked_unavailable(tmp_path: Path) -> None:
    write_config(tmp_path, {"checks": [{"id": "t", "argv": [".venv/bin/python", "-m", "pytest"]}]})
    config = load_project_config(tmp_path)
    assert config is not None and config.checks is not None
    assert config.checks[0].runner_unavailable == ".venv/bin/python is not an executable file"
