"""Cargo and npm discovery, and runner resolution over the fixed search path."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from protoagent.checks import discover_checks
from protoagent.checks.executables import SYSTEM_SEARCH_PATH

from .support import PYTHON, make_executable, only_check, write_repo

NPM_PLACEHOLDER = 'echo "Error: no test specified" && exit 1'


def package_json(scripts: dict[str, str]) -> str:
    return json.dumps({"name": "lib", "version": "1.0.0", "scripts": scripts})


def on_system_path(name: str) -> bool:
    return shutil.which(name, path=os.pathsep.join(SYSTEM_SEARCH_PATH)) is not None


def test_root_cargo_manifest_selects_cargo_test(tmp_path: Path) -> None:
    write_repo(tmp_path, {"Cargo.toml": '[package]\nname = "dates"\n', "src/lib.rs": "", "Cargo.lock": ""})
    plan = discover_checks(tmp_path, python=PYTHON)
    check = only_check(plan)
    assert check.id == "cargo-test"
    assert check.argv[1:] == ("test",)
    assert check.reason == "root Cargo.toml declares a crate"
    assert check.paths == ("Cargo.toml", "Cargo.lock", "src")
    assert plan.dependency_files == ("Cargo.toml", "Cargo.lock")


def test_cargo_in_user_cargo_bin_is_resolved_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    cargo = make_executable(home / ".cargo/bin/cargo")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", os.pathsep.join(SYSTEM_SEARCH_PATH))
    write_repo(tmp_path / "repo", {"Cargo.toml": "[workspace]\nmembers = []\n"})
    check = only_check(discover_checks(tmp_path / "repo", python=PYTHON))
    expected = shutil.which("cargo", path=os.pathsep.join([*SYSTEM_SEARCH_PATH, str(home / ".cargo/bin")]))
    assert check.argv[0] == expected
    assert os.path.isabs(check.argv[0])
    assert check.runner_unavailable is None
    if not on_system_path("cargo"):
        assert check.argv[0] == str(cargo)


def test_missing_runner_keeps_bare_name_and_is_marked_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if on_system_path("cargo"):
        pytest.skip("cargo is installed on the fixed system search path of this machine")
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.setenv("PATH", os.pathsep.join(SYSTEM_SEARCH_PATH))
    write_repo(tmp_path / "repo", {"Cargo.toml": '[package]\nname = "x"\n'})
    check = only_check(discover_checks(tmp_path / "repo", python=PYTHON))
    assert check.argv == ("cargo", "test")
    assert check.runner_unavailable is not None
    assert "'cargo' was not found" in check.runner_unavailable


def test_npm_scripts_become_checks_in_a_fixed_order(tmp_path: Path) -> None:
    scripts = {"build": "tsc", "lint": "eslint .", "start": "node .", "typecheck": "tsc --noEmit", "test": "vitest"}
    write_repo(tmp_path, {"package.json": package_json(scripts), "package-lock.json": "{}"})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("npm-test", "npm-typecheck", "npm-lint", "npm-build")
    argvs = [check.argv[1:] for check in plan.checks]
    assert argvs == [("test",), ("run", "typecheck"), ("run", "lint"), ("run", "build")]
    assert plan.checks[0].reason == "package.json defines the 'test' script: vitest"
    assert plan.dependency_files == ("package.json", "package-lock.json")


def test_npm_placeholder_test_script_is_skipped(tmp_path: Path) -> None:
    write_repo(tmp_path, {"package.json": package_json({"test": NPM_PLACEHOLDER, "lint": "eslint ."})})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("npm-lint",)
    assert "package.json test script is npm's placeholder; skipped" in plan.notes


def test_npm_only_placeholder_gives_no_checks_and_no_bootstrap(tmp_path: Path) -> None:
    write_repo(tmp_path, {"package.json": package_json({"test": NPM_PLACEHOLDER}), "index.js": ""})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.checks == ()
    assert plan.bootstrap_checks == ()


def test_invalid_package_json_is_noted_not_raised(tmp_path: Path) -> None:
    write_repo(tmp_path, {"package.json": "{not json"})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.checks == ()
    assert plan.notes == ("package.json is not valid JSON (or over 1 MiB); npm scripts were not discovered",)


def test_other_discovered_checks_take_precedence_over_bootstrap(tmp_path: Path) -> None:
    write_repo(tmp_path, {"setup.py": "", "package.json": package_json({"lint": "eslint ."})})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("npm-lint",)
    assert plan.bootstrap_checks == ()


def test_python_suite_comes_before_cargo_and_npm(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "package.json": package_json({"test": "jest"}),
            "Cargo.toml": '[package]\nname = "x"\n',
            "tests/test_x.py": "def test_x():\n    pass\n",
        },
    )
    assert discover_checks(tmp_path, python=PYTHON).check_ids == ("pytest", "cargo-test", "npm-test")
