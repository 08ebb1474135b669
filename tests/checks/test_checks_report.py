"""``checks_report``, its text rendering and the ``protoagent checks`` command function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protoagent.checks import PROJECT_CONFIG_PATH, checks_report, render_checks_text
from protoagent.interfaces.cli.checks_cmd import checks_command

from .support import fake_venv, write_repo

REPORT_KEYS = {
    "root",
    "config",
    "checks",
    "bootstrap_checks",
    "dependency_files",
    "dependency_files_count",
    "dependency_files_truncated",
    "notes",
    "interpreter",
}
CHECK_KEYS = {"id", "argv", "cwd", "env", "paths", "reason", "source", "runner_unavailable"}


def test_report_lists_checks_interpreter_and_inventory(tmp_path: Path) -> None:
    link = fake_venv(tmp_path / ".venv")
    write_repo(tmp_path, {"conftest.py": "", "tests/test_dates.py": "import pytest\n"})
    report = checks_report(tmp_path)
    assert set(report) == REPORT_KEYS
    assert report["root"] == str(tmp_path)
    assert report["config"] is None
    assert [set(check) for check in report["checks"]] == [CHECK_KEYS]
    assert report["checks"][0]["argv"] == [str(link), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    assert report["dependency_files_count"] == 2
    assert report["interpreter"] == {
        "path": str(link),
        "source": "project-venv",
        "reason": report["interpreter"]["reason"],
    }
    json.dumps(report)


def test_report_text_shows_each_check_and_bootstrap_marker(tmp_path: Path) -> None:
    write_repo(tmp_path, {"pyproject.toml": "[project]\nname = 'x'\n"})
    text = render_checks_text(checks_report(tmp_path))
    assert "  python-tests  (bootstrap: a runner for tests still to be written)" in text
    assert "-m unittest discover -s . -p 'test_*.py' -q" in text
    assert "source: discovered" in text


def test_report_with_empty_configured_checks_says_work_stays_unverified(tmp_path: Path) -> None:
    write_repo(tmp_path, {PROJECT_CONFIG_PATH: '{"checks": []}', "app.py": ""})
    report = checks_report(tmp_path)
    assert report["config"] == PROJECT_CONFIG_PATH
    assert report["checks"] == []
    assert "code changes will stay unverified" in render_checks_text(report)


def test_checks_command_prints_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_repo(tmp_path, {"tests/test_x.py": "def test_x():\n    pass\n"})
    assert checks_command(tmp_path, as_json=True) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [check["id"] for check in printed["checks"]] == ["pytest"]


def test_checks_command_prints_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_repo(tmp_path, {"Cargo.toml": '[package]\nname = "x"\n'})
    assert checks_command(tmp_path, as_json=False) == 0
    out = capsys.readouterr().out
    assert "cargo-test" in out
    assert "why: root Cargo.toml declares a crate [discovery]" in out


def test_checks_command_reports_malformed_config_with_exit_code_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_repo(tmp_path, {PROJECT_CONFIG_PATH: '{"checks": "pytest"}'})
    assert checks_command(tmp_path, as_json=True) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "project.json: checks: must be a list" in captured.err.replace("\n", "")


def test_checks_command_refuses_a_missing_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert checks_command(tmp_path / "missing", as_json=False) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_checks_text_lists_the_first_dependency_files_and_a_count(tmp_path: Path) -> None:
    files = {"tests/test_x.py": "def test_x():\n    pass\n", "pyproject.toml": "[project]\nname = 'x'\n"}
    files.update({f"requirements-{i}.txt": "" for i in range(7)})
    report = checks_report(tmp_path / "repo") if write_repo(tmp_path / "repo", files) else {}
    count = report["dependency_files_count"]
    line = next(x for x in render_checks_text(report).splitlines() if "dependency files:" in x)
    assert line.startswith(f"  dependency files: {count} (") and report["dependency_files"][0] in line
    if count > 5:
        assert f"and {count - 5} more" in line


def test_checks_text_omits_the_python_line_without_a_python_check(tmp_path: Path) -> None:
    write_repo(tmp_path, {"Cargo.toml": '[package]\nname = "x"\n'})
    assert "python:" not in render_checks_text(checks_report(tmp_path))
    write_repo(tmp_path / "py", {"tests/test_x.py": "def test_x():\n    pass\n"})
    assert "  python: " in render_checks_text(checks_report(tmp_path / "py"))
