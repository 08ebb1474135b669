"""Layouts of real public projects (file contents are our own minimal stand-ins, not their code).

Each test builds the *shape* of a well-known project and asserts the report gives the command its
maintainers run: pytest for requests and attrs, ``python -m unittest`` for tomli (its CI runs
exactly that), ``cargo test`` for a library crate, and the npm scripts of a TypeScript library.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from protoagent.checks import checks_report, discover_checks

from .support import PYTHON, write_repo

REQUESTS_LIKE = {
    "pyproject.toml": (
        '[project]\nname = "requests"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n\n'
        '[tool.pytest.ini_options]\naddopts = "--doctest-modules"\nminversion = "6.2"\ntestpaths = ["tests"]\n'
    ),
    "src/requests/__init__.py": "",
    "src/requests/api.py": "def get(url):\n    return url\n",
    "tests/__init__.py": "",
    "tests/conftest.py": "import pytest\n\n\n@pytest.fixture\ndef httpbin_url():\n    return 'http://127.0.0.1'\n",
    "tests/compat.py": "",
    "tests/utils.py": "def override_environ(**kwargs):\n    return kwargs\n",
    "tests/test_requests.py": "import pytest\n\nfrom requests import api\n\n\nclass TestRequests:\n    pass\n",
    "tests/test_utils.py": "import pytest\n\n\ndef test_override():\n    pass\n",
    "tests/testserver/__init__.py": "",
    "tests/testserver/server.py": "class Server:\n    pass\n",
    "tests/certs/README.md": "test certificates\n",
    "docs/index.rst": "Requests\n========\n",
}

ATTRS_LIKE = {
    "pyproject.toml": (
        '[project]\nname = "attrs"\n\n[tool.pytest.ini_options]\n'
        'addopts = ["-ra", "--strict-markers", "--strict-config"]\nxfail_strict = true\ntestpaths = "tests"\n'
    ),
    "tox.ini": "[tox]\nenv_list = py3{8,9,10,11}-tests\n\n[testenv]\ncommands = pytest {posargs}\n",
    "conftest.py": "def pytest_configure(config):\n    pass\n",
    "src/attr/__init__.py": "",
    "src/attrs/__init__.py": "",
    "tests/__init__.py": "",
    "tests/strategies.py": "from hypothesis import strategies as st\n",
    "tests/utils.py": "def simple_class():\n    pass\n",
    "tests/test_make.py": "import inspect\n\nimport pytest\n\n\nclass TestTransformAttrs:\n    pass\n",
    "tests/test_funcs.py": "from .utils import simple_class\n\n\ndef test_asdict():\n    simple_class()\n",
    "bench/test_benchmarks.py": "def test_create_simple_class(benchmark):\n    pass\n",
}

TOMLI_LIKE = {
    "pyproject.toml": '[project]\nname = "tomli"\n\n[tool.coverage.run]\nbranch = true\n',
    "src/tomli/__init__.py": "",
    "src/tomli/_parser.py": "def loads(text):\n    return {}\n",
    "tests/__init__.py": "",
    "tests/burntsushi.py": "def convert(obj):\n    return obj\n",
    "tests/data/valid/array.toml": "a = [1, 2]\n",
    "tests/data/invalid/bad.toml": "a = \n",
    "tests/test_data.py": (
        "import unittest\n\nfrom . import burntsushi\n\n\nclass TestData(unittest.TestCase):\n"
        "    def test_convert(self):\n        self.assertEqual(burntsushi.convert(1), 1)\n"
    ),
    "tests/test_error.py": "import unittest\n\n\nclass TestError(unittest.TestCase):\n    def test_line(self): ...\n",
    "tests/test_misc.py": "import unittest\n\n\nclass TestMisc(unittest.TestCase):\n    def test_x(self): ...\n",
}

CRATE_LIKE = {
    "Cargo.toml": '[package]\nname = "semver"\nversion = "1.0.0"\nedition = "2018"\n\n[dev-dependencies]\n',
    "src/lib.rs": "pub fn parse() {}\n",
    "src/parse.rs": "",
    "tests/test_version.rs": "#[test]\nfn test_parse() {}\n",
    "benches/parse.rs": "",
    "build.rs": "fn main() {}\n",
}

TYPESCRIPT_LIBRARY_SCRIPTS = {
    "build": "tsc -p tsconfig.build.json",
    "lint": "eslint .",
    "prepublishOnly": "npm run build",
    "test": "vitest run",
    "typecheck": "tsc --noEmit",
}

TOOLZ_LIKE = {  # tests inside the package, pytest-style classes that derive from nothing
    "setup.py": "from setuptools import setup\n\nsetup(name='toolz')\n",
    "toolz/__init__.py": "from .dicttoolz import valfilter\n",
    "toolz/dicttoolz.py": "def valfilter(predicate, d):\n    return {k: v for k, v in d.items() if predicate(v)}\n",
    "toolz/tests/test_dicttoolz.py": (
        "from toolz import valfilter\n\n\nclass TestDict(object):\n"
        "    def test_valfilter(self):\n        assert valfilter(bool, {1: 0, 2: 1}) == {2: 1}\n"
    ),
    "toolz/curried/__init__.py": "",
    "tlz/__init__.py": "",
}


def test_toolz_layout_finds_the_tests_inside_the_package_and_runs_pytest(tmp_path: Path) -> None:
    write_repo(tmp_path, TOOLZ_LIKE)
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("pytest",) and plan.bootstrap_checks == ()
    assert plan.checks[0].paths == ("toolz/tests",)
    assert plan.dependency_files == ("toolz/tests/test_dicttoolz.py",)
    result = subprocess.run(plan.checks[0].argv, cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "1 passed" in result.stdout, result.stdout + result.stderr


def test_a_test_module_directly_in_the_package_is_found_and_a_testing_helper_is_not(tmp_path: Path) -> None:
    write_repo(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "iso8601"\n',
            "iso8601/__init__.py": "from .iso8601 import parse_date\n",
            "iso8601/iso8601.py": "def parse_date(text):\n    return text\n",
            "iso8601/testing.py": "def helper():\n    return 1\n",
            "iso8601/test_iso8601.py": "from iso8601 import parse_date\n\n\ndef test_x():\n    assert parse_date(1)\n",
        },
    )
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("pytest",) and plan.dependency_files == ("iso8601/test_iso8601.py",)


def test_requests_layout_runs_pytest(tmp_path: Path) -> None:
    write_repo(tmp_path, REQUESTS_LIKE)
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("pytest",)
    check = plan.checks[0]
    assert check.argv == (PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    assert check.reason == (
        "tests/test_requests.py imports pytest; pyproject.toml configures pytest ([tool.pytest.ini_options])"
    )
    assert check.paths == ("pyproject.toml", "tests")
    assert plan.dependency_files[:2] == ("pyproject.toml", "tests/conftest.py")
    assert "tests/testserver/server.py" in plan.dependency_files
    assert not any(path.startswith(("docs/", "src/")) for path in plan.dependency_files)


def test_attrs_layout_runs_pytest_with_root_conftest(tmp_path: Path) -> None:
    write_repo(tmp_path, ATTRS_LIKE)
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("pytest",)
    assert plan.checks[0].paths == ("pyproject.toml", "conftest.py", "tests")
    assert "tox.ini" not in plan.dependency_files
    assert "bench/test_benchmarks.py" not in plan.dependency_files
    assert {"conftest.py", "tests/test_make.py", "tests/test_funcs.py", "tests/strategies.py"} <= set(
        plan.dependency_files
    )


def test_tomli_layout_keeps_the_stdlib_runner_and_it_runs(tmp_path: Path) -> None:
    write_repo(tmp_path, TOMLI_LIKE)
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("unittest",)
    check = plan.checks[0]
    assert check.argv == (PYTHON, "-m", "unittest", "discover", "-s", ".", "-p", "test*.py", "-q")
    assert check.reason == (
        "tests/test_data.py defines TestData, derived from unittest.TestCase; "
        "no pytest markers, so the stdlib runner is kept"
    )
    result = subprocess.run(
        check.argv, cwd=tmp_path, env={"PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "Ran 3 tests" in result.stderr


def test_library_crate_layout_runs_cargo_test(tmp_path: Path) -> None:
    write_repo(tmp_path, CRATE_LIKE)
    plan = discover_checks(tmp_path, python=PYTHON)
    assert plan.check_ids == ("cargo-test",)
    assert plan.checks[0].argv[1:] == ("test",)
    assert plan.checks[0].paths == ("Cargo.toml", "src", "tests")
    assert plan.bootstrap_checks == ()


def test_typescript_library_layout_runs_its_npm_scripts(tmp_path: Path) -> None:
    manifest = {"name": "lib", "type": "module", "scripts": TYPESCRIPT_LIBRARY_SCRIPTS}
    write_repo(tmp_path, {"package.json": json.dumps(manifest, indent=2), "src/index.ts": "", "tsconfig.json": "{}"})
    report = checks_report(tmp_path)
    commands = {check["id"]: check["argv"][1:] for check in report["checks"]}
    assert commands == {
        "npm-test": ["test"],
        "npm-typecheck": ["run", "typecheck"],
        "npm-lint": ["run", "lint"],
        "npm-build": ["run", "build"],
    }
    assert report["bootstrap_checks"] == []
