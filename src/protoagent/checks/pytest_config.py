"""Finding pytest configuration (pytest.ini, pyproject.toml, setup.cfg, tox.ini) and its testpaths."""

from __future__ import annotations

import configparser
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from protoagent.checks.executables import beneath_root
from protoagent.checks.inventory import RootListing, read_prefix

CONFIG_READ_LIMIT = 256 * 1024
"""Configuration files are read up to this many bytes; a longer file is searched but not parsed."""

_SECTIONS: dict[str, tuple[re.Pattern[bytes], str]] = {
    "pytest.ini": (re.compile(rb"^\[pytest\]", re.M), "[pytest]"),
    ".pytest.ini": (re.compile(rb"^\[pytest\]", re.M), "[pytest]"),
    "pyproject.toml": (re.compile(rb"^\[tool\.pytest(?:\.ini_options)?\]", re.M), "[tool.pytest.ini_options]"),
    "tox.ini": (re.compile(rb"^\[pytest\]", re.M), "[pytest]"),
    "setup.cfg": (re.compile(rb"^\[tool:pytest\]", re.M), "[tool:pytest]"),
}


@dataclass(frozen=True, slots=True)
class PytestConfig:
    """The pytest configuration files found at the root, and the test paths they name."""

    files: tuple[str, ...]
    """Root files holding a pytest section, in pytest's own lookup order."""
    reason: str | None
    """``pyproject.toml configures [tool.pytest.ini_options]`` or ``None`` when there is none."""
    testpaths: tuple[str, ...]
    """Workspace-relative directories named by ``testpaths``."""


def find_pytest_config(root: Path, listing: RootListing) -> PytestConfig:
    """Read the root configuration files that may hold a pytest section (bounded reads)."""
    files: list[str] = []
    reason: str | None = None
    testpaths: list[str] = []
    for name, (pattern, section) in _SECTIONS.items():
        if name not in listing.files:
            continue
        text = read_prefix(root, name, CONFIG_READ_LIMIT + 1)
        if name != "pytest.ini" and not pattern.search(text):
            continue
        files.append(name)
        if reason is None:
            reason = f"{name} configures pytest ({section})"
        if len(text) <= CONFIG_READ_LIMIT:
            testpaths.extend(_testpaths(root, name, text))
    return PytestConfig(tuple(files), reason, tuple(dict.fromkeys(testpaths)))


def _testpaths(root: Path, name: str, text: bytes) -> list[str]:
    values = _toml_testpaths(text) if name == "pyproject.toml" else _ini_testpaths(name, text)
    normal = (beneath_root(root, value) for value in values)
    return [path for path in normal if path is not None and path != "." and os.path.isdir(os.path.join(root, path))]


def _toml_testpaths(text: bytes) -> list[str]:
    try:
        document = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return []
    options = document.get("tool", {}).get("pytest", {})
    value = options.get("ini_options", options).get("testpaths", [])
    if isinstance(value, str):
        return value.split()
    return [item for item in value if isinstance(item, str)] if isinstance(value, list) else []


def _ini_testpaths(name: str, text: bytes) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text.decode("utf-8", "replace"))
    except configparser.Error:
        return []
    section = "tool:pytest" if name == "setup.cfg" else "pytest"
    return parser.get(section, "testpaths", fallback="").split()
