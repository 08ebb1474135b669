"""Localization reads real runner output and the repository's source, and nothing else."""

from __future__ import annotations

from pathlib import Path

from protoagent.repair.localize import assertion_message, localize

from .support import DATE_REPO, PRICES_REPO, pytest_output, repo, unittest_output


def test_pytest_failure_localizes_to_the_called_function_with_expected_and_actual(tmp_path: Path) -> None:
    root = repo(tmp_path)
    found = localize(root, pytest_output(root))
    assert found is not None
    assert found.failed_tests == ("test_prices.py::test_with_tax_adds_the_rate",)
    assert [(f.path, f.name) for f in found.functions] == [("prices.py", "with_tax")]
    assert "75.0 == 125.0" in found.message
    assert found.test_line == "assert with_tax(100.0, 0.25) == 125.0"


def test_unittest_failure_localizes_through_the_test_modules_imports(tmp_path: Path) -> None:
    root = repo(tmp_path, DATE_REPO)
    found = localize(root, unittest_output(root))
    assert found is not None
    function = found.functions[0]
    assert (function.path, function.name) == ("dates.py", "parse_date")
    assert "(2024, 15, 3) != (2024, 3, 15)" in found.message
    # the return line first; the def line is never offered
    assert function.line(function.ranked[0]).strip() == "return int(year), int(day), int(month)"
    assert function.start not in function.ranked


def test_traceback_line_in_the_source_ranks_first_and_the_docstring_is_never_offered(tmp_path: Path) -> None:
    files = {
        "stats.py": 'def mean(values):\n    """Mean."""\n    total = sum(values)\n'
        "    count = len(values) - len(values)\n    return total / count\n",
        "test_stats.py": "import stats\n\n\ndef test_mean():\n    assert stats.mean([1, 3]) == 2\n",
    }
    root = repo(tmp_path, files)
    found = localize(root, pytest_output(root))
    assert found is not None
    function = found.functions[0]
    assert function.name == "mean"
    assert function.ranked[0] == 5  # ZeroDivisionError is raised on the return line
    assert 2 not in function.ranked
    assert "ZeroDivisionError" in found.message


def test_helpers_the_function_calls_in_its_own_module_are_included(tmp_path: Path) -> None:
    files = {
        "geometry.py": "def describe(w, h):\n    return label(h, w)\n\n\ndef label(w, h):\n    return f'{w}x{h}'\n",
        "test_geometry.py": "from geometry import describe\n\n\n"
        "def test_describe():\n    assert describe(3, 2) == '3x2'\n",
    }
    root = repo(tmp_path, files)
    found = localize(root, pytest_output(root))
    assert found is not None
    assert [f.name for f in found.functions] == ["describe", "label"]


def test_output_without_a_workspace_traceback_localizes_nothing(tmp_path: Path) -> None:
    root = repo(tmp_path, PRICES_REPO)
    assert localize(root, "error: something went wrong\n") is None


def test_assertion_message_reads_pytest_e_lines() -> None:
    output = (
        "    def test_x():\n>       assert f() == 2\nE       assert 1 == 2\nE        +  where 1 = f()\n"
        "\nt.py:4: AssertionError\n"
    )
    assert assertion_message(output) == "assert 1 == 2\n+  where 1 = f()"


def test_an_overload_stub_is_skipped_for_the_implementation(tmp_path: Path) -> None:
    files = {
        "signer.py": "from typing import overload\n\n\n"
        "@overload\ndef unsign(value: str) -> str: ...\n\n\n"
        "@overload\ndef unsign(value: bytes) -> bytes: ...\n\n\n"
        "def unsign(value):\n    return value[1:]\n",
        "test_signer.py": "from signer import unsign\n\n\ndef test_unsign():\n    assert unsign('ab') == 'ab'\n",
    }
    root = repo(tmp_path, files)
    found = localize(root, pytest_output(root))
    assert found is not None
    function = found.functions[0]
    assert (function.name, function.start) == ("unsign", 12)
    assert function.line(function.ranked[0]).strip() == "return value[1:]"


def test_a_long_function_is_shown_as_a_window_around_its_traceback_line(tmp_path: Path) -> None:
    body = "".join(f"    step{i} = {i}\n" for i in range(70))
    files = {
        "long.py": f"def check(age):\n{body}    if age < 0:\n        raise ValueError('negative age')\n"
        + "".join(f"    after{i} = {i}\n" for i in range(30))
        + "    return age\n",
        "test_long.py": "from long import check\n\n\ndef test_check():\n    assert check(-1) == -1\n",
    }
    root = repo(tmp_path, files)
    found = localize(root, pytest_output(root))
    assert found is not None
    function = found.functions[0]
    raise_line = 1 + 70 + 2
    assert function.name == "check"
    assert function.start == raise_line - 12
    assert len(function.lines) == 25
    assert function.ranked[0] == raise_line
    assert "raise ValueError" in function.numbered()
