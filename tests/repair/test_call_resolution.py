"""A method is localized through the class of ``self``, never by the first function of that name."""

from __future__ import annotations

from pathlib import Path

from protoagent.repair.localize import localize

from .support import pytest_output, repo

URL_AND_RANGE = """class URL:
    def __init__(self, text):
        self.text = text

    def _format_error(self, value):
        return f"invalid URL: {value!r}"


class Range:
    def __init__(self, low, high):
        self.low, self.high = low, high

    def __call__(self, value):
        if not self.low <= value < self.high:
            raise ValueError(self._format_error(value))
        return value

    def _format_error(self, value):
        return f"{value} is not in {self.low}..{self.high}"
"""
RANGE_TEST = """from models import Range


def test_range_includes_its_upper_bound():
    assert Range(1, 5)(5) == 5
"""
RANGE_REPO = {"models.py": URL_AND_RANGE, "test_models.py": RANGE_TEST}


def _shown(root: Path) -> list[tuple[str, str, int]]:
    found = localize(root, pytest_output(root))
    assert found is not None
    return [(f.path, f.name, f.start) for f in found.functions if f.name != "__init__"]  # constructors: below


def test_self_method_resolves_to_the_failing_class_not_the_first_definition_in_the_file(tmp_path: Path) -> None:
    shown = _shown(repo(tmp_path, RANGE_REPO))
    assert shown == [("models.py", "__call__", 13), ("models.py", "_format_error", 18)]
    assert ("models.py", "_format_error", 5) not in shown  # URL's method is not involved


def test_self_method_inherited_from_an_imported_base_resolves_to_the_base(tmp_path: Path) -> None:
    base = "class Base:\n    def _format_error(self, value):\n        return f'{value} is out of range'\n"
    models = URL_AND_RANGE.replace("class Range:", "class Range(Base):").split("\n    def _format_error(self, value):")
    files = {
        "base.py": base,
        "models.py": "from base import Base\n\n\n" + models[0] + "\n    def _format_error(self, value):" + models[1],
        "test_models.py": RANGE_TEST,
    }
    shown = _shown(repo(tmp_path, files))
    assert shown == [("models.py", "__call__", 16), ("base.py", "_format_error", 2)]


def test_a_base_the_files_cannot_show_makes_the_inherited_method_unknown_and_nothing_is_shown(
    tmp_path: Path,
) -> None:
    models = URL_AND_RANGE.replace("class Range:", "class Range(collections.UserDict):")
    models = "import collections\n\n\n" + models.rsplit("\n    def _format_error", 1)[0] + "\n"
    shown = _shown(repo(tmp_path, {"models.py": models, "test_models.py": RANGE_TEST}))
    assert shown == [("models.py", "__call__", 16)]  # URL._format_error is never offered in its place


def test_a_method_called_on_a_value_of_unknown_type_with_two_definitions_is_left_out(tmp_path: Path) -> None:
    checks = (
        "class Even:\n    def check(self, n):\n        return n % 2 == 0\n\n\n"
        "class Odd:\n    def check(self, n):\n        return n % 2 == 0\n"
    )
    checks += "\n\ndef make_rule():\n    return Odd()\n"
    test = "from checks import make_rule\n\n\ndef test_odd():\n    rule = make_rule()\n    assert rule.check(3)\n"
    root = repo(tmp_path, {"checks.py": checks, "test_checks.py": test})
    # what make_rule returns is not known from the files, and two `check` methods exist: neither is shown
    found = localize(root, pytest_output(root))
    assert found is not None and [f.name for f in found.functions] == ["make_rule"]


def test_a_method_named_once_in_the_imported_modules_is_still_found(tmp_path: Path) -> None:
    checks = "class Odd:\n    def check(self, n):\n        return n % 2 == 0\n"
    test = "from checks import Odd\n\n\ndef test_odd():\n    rule = Odd()\n    assert rule.check(3)\n"
    assert _shown(repo(tmp_path, {"checks.py": checks, "test_checks.py": test})) == [("checks.py", "check", 2)]


def test_a_method_of_a_reexported_class_called_on_an_instance_is_localized_through_the_index(tmp_path: Path) -> None:
    files = {
        "shop/__init__.py": "from .cart import Cart as Cart\n",
        "shop/cart.py": "class Cart:\n    def total(self, prices):\n        return sum(prices) - 1\n",
        "shop/other.py": "class Ledger:\n    def total(self, prices):\n        return 0\n",
        "test_cart.py": (
            "from shop import Cart\n\n\ndef test_total():\n    cart = Cart()\n    assert cart.total([1, 2]) == 3\n"
        ),
    }
    # `cart` is made by Cart(), re-exported by the package: its total is Cart.total, not Ledger.total
    assert _shown(repo(tmp_path, files)) == [("shop/cart.py", "total", 2)]


def test_a_constructor_the_test_line_calls_is_localized_after_the_functions_the_failure_runs_through(
    tmp_path: Path,
) -> None:
    root = repo(tmp_path, RANGE_REPO)
    found = localize(root, pytest_output(root))
    assert found is not None
    assert [(f.name, f.start) for f in found.functions] == [("__call__", 13), ("_format_error", 18), ("__init__", 10)]
