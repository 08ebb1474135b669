"""Static reading of Python test files: which runner their text asks for. Nothing is imported.

Line-anchored byte patterns over a bounded prefix are used instead of ``ast``: a prefix cut at
64 KiB is rarely valid Python, and the patterns cost the same whatever the file holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

ClassKind = Literal["unittest", "plain", "unknown"]

_PYTEST_IMPORT = re.compile(rb"^[ \t]*(?:import[ \t]+[^\n#]*\b_?pytest\b|from[ \t]+_?pytest\b)", re.M)
_UNITTEST_IMPORT = re.compile(rb"^[ \t]*(?:import[ \t]+[^\n#]*\bunittest\b|from[ \t]+unittest\b)", re.M)
_TEST_FUNCTION = re.compile(rb"^(?:async[ \t]+)?def[ \t]+(test\w*)[ \t]*\(", re.M)
_CLASS = re.compile(rb"^class[ \t]+(\w+)[ \t]*(?:\(([^)]*)\))?[ \t]*:", re.M)


@dataclass(slots=True)
class SuiteScan:
    """What the files read so far say; fed one file at a time, in a stable order."""

    pytest_reason: str | None = None
    """The first definite pytest marker found (import, top-level test function, plain Test class)."""
    unittest_reason: str | None = None
    """The first unittest marker found (import of unittest)."""
    classes: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    """Top-level classes seen: name -> (file, base names), first definition wins."""

    def feed(self, relative: str, text: bytes, *, is_test_file: bool) -> None:
        """Record the markers in one file's prefix."""
        if self.pytest_reason is None and _PYTEST_IMPORT.search(text):
            self.pytest_reason = f"{relative} imports pytest"
        if is_test_file and self.pytest_reason is None:
            function = _TEST_FUNCTION.search(text)
            if function is not None:
                name = function.group(1).decode("ascii", "replace")
                self.pytest_reason = f"{relative} defines the top-level test function {name}"
        for match in _CLASS.finditer(text):
            name = match.group(1).decode("ascii", "replace")
            bases = _base_names(match.group(2) or b"")
            self.classes.setdefault(name, (relative, bases))
            if is_test_file and self.pytest_reason is None and name.startswith("Test") and _plain(bases):
                self.pytest_reason = f"{relative} defines {name}, a test class not derived from unittest.TestCase"
        if self.unittest_reason is None and _UNITTEST_IMPORT.search(text):
            self.unittest_reason = f"{relative} imports unittest"

    def resolve_classes(self, test_files: frozenset[str]) -> tuple[str | None, str | None]:
        """After all reads: (pytest reason, unittest reason) from class inheritance across the suite."""
        pytest_reason: str | None = None
        unittest_reason: str | None = None
        for name, (relative, _bases) in self.classes.items():
            kind = self.class_kind(name)
            if kind == "unittest" and unittest_reason is None:
                unittest_reason = f"{relative} defines {name}, derived from unittest.TestCase"
            elif kind == "plain" and pytest_reason is None and name.startswith("Test") and relative in test_files:
                pytest_reason = f"{relative} defines {name}, a test class not derived from unittest.TestCase"
        return pytest_reason, unittest_reason

    def class_kind(self, name: str, seen: frozenset[str] = frozenset()) -> ClassKind:
        """``unittest`` if ``name`` derives from a ``*TestCase`` within the suite's own definitions,
        ``plain`` if every base is a plain class or ``object``, else ``unknown``."""
        definition = self.classes.get(name)
        if definition is None or name in seen:
            return "unittest" if name.endswith("TestCase") else "unknown"
        kinds = ["plain" if base == "object" else self.class_kind(base, seen | {name}) for base in definition[1]]
        if "unittest" in kinds:
            return "unittest"
        return "plain" if all(kind == "plain" for kind in kinds) else "unknown"


def _base_names(text: bytes) -> tuple[str, ...]:
    """``unittest.TestCase, Mixin, metaclass=M`` -> ``("TestCase", "Mixin")`` (last dotted segment)."""
    names: list[str] = []
    for part in text.decode("utf-8", "replace").split(","):
        part = part.split("#", 1)[0].split("[", 1)[0].strip()
        if part and "=" not in part and not part.startswith("*"):
            names.append(part.rsplit(".", 1)[-1])
    return tuple(names)


def _plain(bases: tuple[str, ...]) -> bool:
    return all(base == "object" for base in bases)
