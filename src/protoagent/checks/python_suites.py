"""Finding a Python test suite and choosing its runner (pytest or stdlib unittest) statically.

Only root ``test_*.py`` files and the ``tests/``, ``test/`` and ``core/tests/`` directories, the
``tests/`` and ``test/`` directories and the test modules of the workspace's top-level packages
(``toolz/tests``, ``src/pkg/tests``, ``iso8601/test_iso8601.py``: where many libraries keep them),
and directories a pytest ``testpaths`` names are walked, with ``os.scandir`` and fixed entry budgets.
Files are read up to 64 KiB each and 4 MiB in all, and reading stops at the first definite
pytest marker, so discovery time does not grow with file contents.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from protoagent.checks.inventory import RootListing, read_prefix, walk_files
from protoagent.checks.pytest_config import find_pytest_config
from protoagent.checks.python_scan import SuiteScan

TEST_DIRECTORIES = ("tests", "test", "core/tests")
READ_LIMIT = 64 * 1024
"""Bytes read from the start of each Python file."""
READ_BUDGET = 4 * 1024 * 1024
"""Bytes read from all Python test files together."""
MAX_WALK_ENTRIES = 5000
"""Directory entries visited per test directory."""
MAX_PACKAGES = 32
"""Top-level packages whose own ``tests/`` and ``test/`` folders are looked for."""


@dataclass(frozen=True, slots=True)
class UnittestGroup:
    """One ``unittest discover`` invocation: start directory, top-level directory, file pattern."""

    start: str
    top: str
    pattern: str


@dataclass(frozen=True, slots=True)
class PythonSuite:
    """A discovered Python suite: the runner, why, and the files it depends on."""

    runner: Literal["pytest", "unittest"]
    reason: str
    paths: tuple[str, ...]
    """Declared dependency paths: pytest configuration, root conftest/test files, test directories."""
    dependency_files: tuple[str, ...]
    """Configuration, conftest, test files, package markers and helpers, most important first."""
    unittest_groups: tuple[UnittestGroup, ...] = ()
    notes: tuple[str, ...] = ()


def is_test_file(name: str) -> bool:
    """pytest's and unittest's default test module names: ``test*.py`` or ``*_test.py`` (what
    discovery collects; :func:`is_test_code` asks the wider question)."""
    return name.endswith(".py") and (name.startswith("test") or name.endswith("_test.py"))


def is_test_code(path: str) -> bool:
    """Whether ``path`` is test code rather than code under test: a ``test_*``, ``*_test.py``,
    ``tests.py`` or ``test.py`` module, a ``conftest.py``, or any file beneath a ``tests/`` folder
    (its helpers too)."""
    name = os.path.basename(path)
    named = name.startswith("test_") or name.endswith("_test.py") or name in ("tests.py", "test.py", "conftest.py")
    return named or "/tests/" in f"/{path}"


def find_python_suite(root: Path, listing: RootListing) -> PythonSuite | None:
    """The Python suite of the workspace, or ``None`` when it has no test files."""
    config = find_pytest_config(root, listing)
    packages = _top_packages(root, listing)
    root_tests = sorted(name for name in listing.files if is_test_file(name))  # tests.py too
    root_tests += _package_test_modules(root, packages)
    root_tests += _src_test_modules(root, listing)
    directories = _test_directories(
        root,
        (*TEST_DIRECTORIES, *(f"{p}/{folder}" for p in packages for folder in ("tests", "test")), *config.testpaths),
    )
    walked = [path for directory in directories for path in walk_files(root, directory, max_entries=MAX_WALK_ENTRIES)]
    python_files = [path for path in walked if path.endswith(".py")]
    test_files = [*root_tests, *(path for path in python_files if is_test_file(_name(path)))]
    if not test_files:
        return None
    root_conftest = ["conftest.py"] if "conftest.py" in listing.files else []
    conftests = [*root_conftest, *(path for path in python_files if _name(path) == "conftest.py")]
    scan, notes = _scan(root, [*root_tests, *python_files], frozenset(test_files))
    runner, reason = _decide(scan, frozenset(test_files), config.reason, conftests)
    used_dirs = [directory for directory in directories if any(path.startswith(directory + "/") for path in walked)]
    configs = list(config.files) if runner == "pytest" else []
    paths = (*configs, *root_conftest, *used_dirs, *root_tests)
    dependencies = (*configs, *conftests, *test_files, *python_files)
    groups = _unittest_groups(root, test_files) if runner == "unittest" else ()
    return PythonSuite(runner, reason, tuple(dict.fromkeys(paths)), tuple(dict.fromkeys(dependencies)), groups, notes)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def _top_packages(root: Path, listing: RootListing) -> list[str]:
    """The workspace's top-level packages and those under ``src/`` (at most ``MAX_PACKAGES``):
    their ``tests/`` and ``test/`` folders and their own test modules hold tests too."""
    parents = sorted(d for d in listing.directories if not d.startswith((".", "_")) and d != "src")
    if "src" in listing.directories:
        with contextlib.suppress(OSError):  # an unreadable src/ holds no package we can walk
            parents += sorted(f"src/{e.name}" for e in os.scandir(root / "src") if e.is_dir() and e.name[0] not in "._")
    return [d for d in parents if os.path.isfile(os.path.join(root, d, "__init__.py"))][:MAX_PACKAGES]


def _package_test_modules(root: Path, packages: list[str]) -> list[str]:
    """``PKG/test_*.py`` and ``PKG/*_test.py`` directly in each package (``iso8601/test_iso8601.py``)."""
    found: list[str] = []
    for package in packages:
        if _name(package) in ("tests", "test"):
            continue  # a test folder with an __init__.py: walked as a test directory
        try:
            with os.scandir(root / package) as entries:
                names = sorted(e.name for e in entries if e.is_file(follow_symlinks=False))
        except OSError:
            continue
        found += [
            f"{package}/{n}" for n in names if (n.startswith("test_") and n.endswith(".py")) or n.endswith("_test.py")
        ]
    return found


def _src_test_modules(root: Path, listing: RootListing) -> list[str]:
    """Test modules directly in ``src/`` beside single-module sources (``src/roman.py`` and
    ``src/tests.py``)."""
    if "src" not in listing.directories:
        return []
    with contextlib.suppress(OSError), os.scandir(root / "src") as entries:
        return sorted(f"src/{e.name}" for e in entries if e.is_file(follow_symlinks=False) and is_test_file(e.name))
    return []


def _test_directories(root: Path, candidates: tuple[str, ...]) -> list[str]:
    chosen: list[str] = []
    for candidate in dict.fromkeys(candidates):
        nested = any(candidate == parent or candidate.startswith(parent + "/") for parent in chosen)
        if not nested and os.path.isdir(os.path.join(root, candidate)):
            chosen.append(candidate)
    return chosen


def _scan(root: Path, files: list[str], test_files: frozenset[str]) -> tuple[SuiteScan, tuple[str, ...]]:
    scan = SuiteScan()
    budget = READ_BUDGET
    for index, relative in enumerate(files):
        if scan.pytest_reason is not None:
            break
        if budget <= 0:
            note = f"read budget of {READ_BUDGET} bytes reached; {len(files) - index} Python files not inspected"
            return scan, (note,)
        if _name(relative) in ("conftest.py", "__init__.py"):
            continue
        text = read_prefix(root, relative, min(READ_LIMIT, budget))
        budget -= len(text)
        scan.feed(relative, text, is_test_file=relative in test_files)
    return scan, ()


def _decide(
    scan: SuiteScan, test_files: frozenset[str], config_reason: str | None, conftests: list[str]
) -> tuple[Literal["pytest", "unittest"], str]:
    supporting = config_reason or (f"{conftests[0]} is a pytest plugin file" if conftests else None)
    if scan.pytest_reason is not None:
        extra = f"; {supporting}" if supporting else ""
        return "pytest", scan.pytest_reason + extra
    if supporting is not None:
        return "pytest", supporting
    class_pytest, class_unittest = scan.resolve_classes(test_files)
    if class_pytest is not None:
        return "pytest", class_pytest
    unittest_reason = class_unittest or scan.unittest_reason
    if unittest_reason is not None:
        return "unittest", f"{unittest_reason}; no pytest markers, so the stdlib runner is kept"
    return "unittest", f"{len(test_files)} test files without pytest markers; the stdlib runner is kept"


def _unittest_groups(root: Path, test_files: list[str]) -> tuple[UnittestGroup, ...]:
    """Group test files by the ``discover`` start/top directories that reach them.

    A file inside a package chain that reaches the workspace root is found by ``-s .``, which
    recurses into packages; otherwise discovery starts at the highest package directory with
    its parent as top level, or at a plain directory as its own top level.
    """
    members: dict[tuple[str, str], list[str]] = {}
    for path in test_files:
        directory = path.rsplit("/", 1)[0] if "/" in path else "."
        start, top = _start_and_top(root, directory)
        members.setdefault((start, top), []).append(_name(path))
    groups: list[UnittestGroup] = []
    for (start, top), names in members.items():
        if start != top and (top, top) in members:
            continue
        groups.append(UnittestGroup(start, top, _pattern(names)))
    return tuple(sorted(groups, key=lambda group: (group.start != ".", group.start)))


def _start_and_top(root: Path, directory: str) -> tuple[str, str]:
    if directory == "." or not _is_package(root, directory):
        return directory, directory
    highest = directory
    while "/" in highest and _is_package(root, highest.rsplit("/", 1)[0]):
        highest = highest.rsplit("/", 1)[0]
    top = highest.rsplit("/", 1)[0] if "/" in highest else "."
    return (".", ".") if top == "." else (highest, top)


def _is_package(root: Path, directory: str) -> bool:
    return os.path.isfile(os.path.join(root, directory, "__init__.py"))


def _pattern(names: list[str]) -> str:
    if all(name.startswith("test") for name in names):
        return "test*.py"
    if all(name.endswith("_test.py") for name in names):
        return "*_test.py"
    return "test*.py"
