"""Non-Python toolchains start under the checks' minimal environment, and a runner that cannot
start is 'unavailable' with its first lines, never a code failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.checks import discover_checks
from protoagent.checks.executables import toolchain_env
from protoagent.checks.outcomes import classify

from .support import PYTHON, make_executable, only_check, write_repo

CRATE = {
    "Cargo.toml": '[package]\nname = "adder"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": "pub fn add(a: i32, b: i32) -> i32 { a + b }\n"
    "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(super::add(2, 2), 4); }\n}\n",
}


def test_rustup_proxy_gets_cargo_home_rustup_home_and_the_users_path(tmp_path: Path) -> None:
    cargo = make_executable(tmp_path / "home/.cargo/bin/cargo")
    (tmp_path / "home/.rustup").mkdir()
    env = toolchain_env(str(cargo), {"PATH": f"/opt/tools/bin{os.pathsep}relative"})
    assert env["CARGO_HOME"] == str(tmp_path / "home/.cargo")
    assert env["RUSTUP_HOME"] == str(tmp_path / "home/.rustup")
    assert env["PATH"].split(os.pathsep)[:2] == [str(cargo.parent), "/opt/tools/bin"]
    assert "relative" not in env["PATH"].split(os.pathsep)


def test_node_toolchain_variables_carry_over_when_set(tmp_path: Path) -> None:
    npm = make_executable(tmp_path / "nvm/versions/node/v20/bin/npm")
    env = toolchain_env(str(npm), {"PATH": "/usr/bin", "NVM_DIR": "/n", "NODE_PATH": "/m", "SECRET": "x"})
    assert env["NVM_DIR"] == "/n" and env["NODE_PATH"] == "/m" and "SECRET" not in env
    assert env["PATH"].startswith(str(npm.parent))


def test_discovered_npm_checks_carry_the_toolchain_environment(tmp_path: Path) -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    write_repo(tmp_path, {"package.json": json.dumps({"scripts": {"test": "node -e 1"}})})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert "PATH" in check.env and os.path.dirname(check.argv[0]) in check.env["PATH"].split(os.pathsep)


def test_rustup_without_a_toolchain_is_unavailable_not_failed() -> None:
    output = (
        "error: rustup could not choose a version of cargo to run, because one wasn't specified explicitly,"
        " and no default is configured.\nhelp: run 'rustup default stable' to download the latest stable release\n"
    )
    verdict = classify(1, output)
    assert verdict.outcome == "unavailable"
    assert verdict.unavailable_reason is not None and "rustup default stable" in verdict.unavailable_reason


def test_dependencies_needing_the_network_are_unavailable_not_failed() -> None:
    output = "    Updating crates.io index\nerror: failed to get `serde` as a dependency of package `x v0.1.0`\n"
    assert classify(101, output).outcome == "unavailable"
    assert classify(1, "npm error code ENOTFOUND\nnpm error network request failed\n").outcome == "unavailable"


def test_a_real_test_failure_stays_failed() -> None:
    assert classify(101, "test result: FAILED. 0 passed; 1 failed; 0 ignored;\n").outcome == "failed"


@pytest.mark.skipif(
    shutil.which("cargo") is None and not os.path.exists(os.path.expanduser("~/.cargo/bin/cargo")),
    reason="cargo is not installed",
)
def test_real_cargo_test_passes_through_discovery_and_the_verification_surface(tmp_path: Path) -> None:
    repo = write_repo(tmp_path / "crate", CRATE)
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    env.pop("PROTOAGENT_STORE", None)
    exe = [sys.executable, "-m", "protoagent"]
    shown = subprocess.run([*exe, "checks", "--repo", str(repo), "--json"], env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert [c["id"] for c in json.loads(shown.stdout)["checks"]] == ["cargo-test"]
    done = subprocess.run(
        [
            *exe,
            "run",
            "--repo",
            str(repo),
            "--surface",
            "verification",
            "--approval",
            "auto",
            "--json",
            "run the tests",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    report = json.loads(done.stdout)
    check = {"id": "cargo-test", "phase": "verify", "outcome": "passed", "tests_run": 1}
    assert report["checks"] == [{**check, "failed_tests": [], "preexisting_failures": []}], report
    assert report["verified"] is True and done.returncode == 0
