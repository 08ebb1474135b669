"""Static discovery of Python suites: runner choice, unittest start directories, dependencies."""

from __future__ import annotations

import subprocess
from pathlib import Path

from protoagent.checks import BOOTSTRAP_CHECK_ID, MAX_DEPENDENCY_FILES, discover_checks

from .support import PYTHON, only_check, write_repo

UNITTEST_CASE = "import unittest\n\n\nclass DatesTest(unittest.TestCase):\n    def test_parse(self):\n        pass\n"


def test_pytest_import_selects_pytest(tmp_path: Path) -> None:
    write_repo(tmp_path, {"dates.py": "", "tests/test_dates.py": "import pytest\n\n\ndef helper():\n    pass\n"})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "pytest"
    assert check.argv == (PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert check.reason == "tests/test_dates.py imports pytest"
    assert check.source == "discovery"
    assert check.paths == ("tests",)


def test_top_level_test_function_selects_pytest(tmp_path: Path) -> None:
    write_repo(tmp_path, {"test_dates.py": "from dates import parse\n\n\ndef test_parse():\n    assert parse()\n"})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "pytest"
    assert "test_dates.py defines the top-level test function test_parse" in check.reason


def test_test_class_not_derived_from_testcase_selects_pytest(tmp_path: Path) -> None:
    write_repo(tmp_path, {"tests/test_dates.py": "class TestDates:\n    def test_parse(self):\n        pass\n"})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "pytest"
    assert "TestDates, a test class not derived from unittest.TestCase" in check.reason


def test_unittest_only_suite_keeps_stdlib_runner(tmp_path: Path) -> None:
    write_repo(tmp_path, {"dates.py": "", "test_dates.py": UNITTEST_CASE})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "unittest"
    assert check.argv == (PYTHON, "-m", "unittest", "discover", "-s", ".", "-p", "test*.py", "-q")
    assert "DatesTest, derived from unittest.TestCase" in check.reason


def test_testcase_inherited_through_suite_base_class_is_unittest(tmp_path: Path) -> None:
    base = "import unittest\n\n\nclass BaseCase(unittest.TestCase):\n    pass\n"
    write_repo(
        tmp_path,
        {
            "tests/base.py": base,
            "tests/test_dates.py": "from base import BaseCase\n\n\nclass TestDates(BaseCase):\n    pass\n",
        },
    )
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "unittest"


def test_plain_suite_base_class_selects_pytest(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "tests/base.py": "class Helpers:\n    pass\n",
            "tests/test_dates.py": "from base import Helpers\n\n\nclass TestDates(Helpers):\n    pass\n",
        },
    )
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "pytest"
    assert "tests/test_dates.py defines TestDates" in check.reason


def test_mixed_suite_uses_pytest(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {"tests/test_a_old.py": UNITTEST_CASE, "tests/test_b_new.py": "def test_new():\n    assert True\n"},
    )
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "pytest"
    assert check.reason.startswith("tests/test_b_new.py defines the top-level test function test_new")


def test_tests_moved_into_package_are_found_by_root_discover(tmp_path: Path) -> None:
    write_repo(tmp_path, {"dates.py": "", "tests/__init__.py": "", "tests/test_dates.py": UNITTEST_CASE})
    plan = discover_checks(tmp_path, python=PYTHON)
    check = only_check(plan)
    assert check.argv == (PYTHON, "-m", "unittest", "discover", "-s", ".", "-p", "test*.py", "-q")
    assert {"tests/test_dates.py", "tests/__init__.py"} <= set(plan.dependency_files)


def test_tests_directory_without_package_marker_starts_there(tmp_path: Path) -> None:
    write_repo(tmp_path, {"dates.py": "", "tests/test_dates.py": UNITTEST_CASE})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.argv == (PYTHON, "-m", "unittest", "discover", "-s", "tests", "-p", "test*.py", "-q")


def test_root_files_and_plain_tests_directory_get_one_check_each(tmp_path: Path) -> None:
    write_repo(tmp_path, {"test_root.py": UNITTEST_CASE, "tests/test_dates.py": UNITTEST_CASE})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("unittest-root", "unittest-tests")
    assert plan.checks[1].argv[4:6] == ("-s", "tests")


def test_package_below_plain_directory_uses_top_level_option(tmp_path: Path) -> None:
    write_repo(tmp_path, {"core/tests/__init__.py": "", "core/tests/test_models.py": UNITTEST_CASE})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.argv == (
        PYTHON, "-m", "unittest", "discover", "-s", "core/tests", "-p", "test*.py", "-t", "core", "-q",
    )  # fmt: skip


def test_underscore_test_suffix_sets_the_unittest_pattern(tmp_path: Path) -> None:
    write_repo(tmp_path, {"test/dates_test.py": UNITTEST_CASE})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.argv[4:8] == ("-s", "test", "-p", "*_test.py")


def test_conftest_and_pytest_configuration_become_revision_dependencies(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "pyproject.toml": "[project]\nname = 'x'\n\n[tool.pytest.ini_options]\naddopts = '-ra'\n",
            "setup.cfg": "[metadata]\nname = x\n",
            "tox.ini": "[tox]\nenvlist = py311\n\n[pytest]\nxfail_strict = true\n",
            "conftest.py": "",
            "tests/conftest.py": "import pytest\n",
            "tests/test_a.py": "def test_a():\n    pass\n",
            "tests/helpers.py": "",
        },
    )
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.dependency_files == (
        "pyproject.toml", "tox.ini", "conftest.py", "tests/conftest.py", "tests/test_a.py", "tests/helpers.py",
    )  # fmt: skip
    assert only_check(plan).paths == ("pyproject.toml", "tox.ini", "conftest.py", "tests")


def test_pytest_configuration_selects_pytest_for_unittest_style_cases(tmp_path: Path) -> None:
    write_repo(tmp_path, {"pytest.ini": "[pytest]\n", "tests/test_dates.py": UNITTEST_CASE})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "pytest"
    assert check.reason == "pytest.ini configures pytest ([pytest])"


def test_configured_testpaths_are_inspected(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\ntestpaths = ["testing"]\n',
            "testing/test_core.py": "def test_core():\n    pass\n",
        },
    )
    plan = discover_checks(tmp_path, python=PYTHON)
    assert only_check(plan).reason.startswith("testing/test_core.py defines the top-level test function")
    assert "testing/test_core.py" in plan.dependency_files


def test_dependency_inventory_is_capped_at_512_files(tmp_path: Path) -> None:
    write_repo(tmp_path, {f"tests/test_{index:04}.py": "def test_x():\n    pass\n" for index in range(600)})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert len(plan.dependency_files) == MAX_DEPENDENCY_FILES
    assert plan.dependency_files_truncated


def test_python_project_without_tests_gets_bootstrap_python_tests(tmp_path: Path) -> None:
    write_repo(tmp_path, {"pyproject.toml": "[project]\nname = 'dates'\n", "src/dates/__init__.py": ""})
    plan = discover_checks(tmp_path, python=PYTHON)
    check = only_check(plan)
    assert check.id == BOOTSTRAP_CHECK_ID
    assert check.argv == (PYTHON, "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py", "-q")
    assert check.source == "bootstrap"
    assert plan.bootstrap_checks == (BOOTSTRAP_CHECK_ID,)


def test_src_layout_without_manifest_is_a_python_project(tmp_path: Path) -> None:
    write_repo(tmp_path, {"src/dates/__init__.py": "", "tests/README.md": "tests go here\n"})
    assert discover_checks(tmp_path, python=PYTHON).bootstrap_checks == (BOOTSTRAP_CHECK_ID,)


def test_non_python_project_without_checks_gets_nothing(tmp_path: Path) -> None:
    write_repo(tmp_path, {"README.md": "docs\n", "notes/todo.txt": ""})
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.checks == ()
    assert plan.bootstrap_checks == ()


def test_discovery_never_imports_project_code(tmp_path: Path) -> None:
    sentinel = tmp_path / "IMPORTED"
    side_effect = f"open({str(sentinel)!r}, 'w').close()\nraise SystemExit('imported')\n"
    write_repo(
        tmp_path,
        {
            "setup.py": side_effect,
            "conftest.py": side_effect,
            "dates/__init__.py": side_effect,
            "tests/__init__.py": side_effect,
            "tests/conftest.py": side_effect,
            "tests/test_dates.py": side_effect + UNITTEST_CASE,
        },
    )
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("pytest",)
    assert not sentinel.exists()


def test_discovery_reads_no_more_than_a_bounded_prefix(tmp_path: Path) -> None:
    late_marker = "x = 1\n" * 20_000 + "import pytest\n"
    write_repo(tmp_path, {"tests/test_big.py": UNITTEST_CASE + late_marker})
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "unittest"


def test_discovery_walks_only_named_test_directories(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "setup.py": "",
            "scripts/test_release.py": "import pytest\n",
            "src/dates/tests/test_inner.py": "import pytest\n",
            "docs/test_examples.py": "import pytest\n",
        },
    )
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == (BOOTSTRAP_CHECK_ID,)
    assert plan.dependency_files == ()


def test_directory_symlink_loops_are_not_followed(tmp_path: Path) -> None:
    write_repo(tmp_path, {"tests/test_dates.py": UNITTEST_CASE})
    (tmp_path / "tests/loop").symlink_to(tmp_path / "tests", target_is_directory=True)
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.dependency_files == ("tests/test_dates.py",)


def test_a_pytest_suite_in_src_tests_py_is_found_and_named_to_pytest_since_it_would_not_collect_it(
    tmp_path: Path,
) -> None:
    files = {
        "pyproject.toml": "[project]\nname = 'roman'\n",
        "src/roman.py": "def to_roman(n):\n    return 'I' * n\n",
        "src/tests.py": "from roman import to_roman\n\n\ndef test_one():\n    assert to_roman(1) == 'I'\n",
    }
    write_repo(tmp_path, files)
    check = only_check(discover_checks(tmp_path, python=PYTHON))
    assert check.id == "pytest" and check.argv[-1] == "src/tests.py"
    ran = subprocess.run(check.argv, cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert ran.returncode == 0 and "1 passed" in ran.stdout, ran.stdout + ran.stderr
    write_repo(
        tmp_path / "dash", {"tests.py": "def test_x():\n    pass\n", "-pevil_test.py": "def test_y():\n    pass\n"}
    )
    assert only_check(discover_checks(tmp_path / "dash", python=PYTHON)).argv[-2:] == ("./-pevil_test.py", "tests.py")
    default = {"dates.py": "", "tests/test_dates.py": "def test_x():\n    pass\n"}
    write_repo(tmp_path / "plain", default)
    assert only_check(discover_checks(tmp_path / "plain", python=PYTHON)).argv[-1] == "no:cacheprovider"
