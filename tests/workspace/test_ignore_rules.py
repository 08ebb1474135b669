"""Ignore files are read the way git reads them, without running git."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from protoagent.workspace.ignore import is_ignored, parse_ignore_file
from protoagent.workspace.paths import DIR_FLAGS
from protoagent.workspace.search import visible_files


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "ignored"),
    [
        ("*.log", "a/b/debug.log", False, True),
        ("/build", "build", True, True),
        ("/build", "src/build", True, False),
        ("build/", "src/build", True, True),
        ("build/", "src/build", False, False),
        ("doc/*.txt", "doc/a.txt", False, True),
        ("doc/*.txt", "doc/sub/a.txt", False, False),
        ("**/cache", "x/y/cache", True, True),
        ("a/**/b", "a/b", False, True),
        ("a/**/b", "a/x/y/b", False, True),
        ("out/**", "out", True, False),
        ("out/**", "out/x", False, True),
        ("\\#keep", "#keep", False, True),
        ("[^a]x", "bx", False, True),
        ("[^a]x", "ax", False, False),
        ("trailing   ", "trailing", False, True),
    ],
)
def test_ignore_pattern_semantics(pattern: str, path: str, is_dir: bool, ignored: bool) -> None:
    assert is_ignored(parse_ignore_file(pattern, ""), path, is_dir) is ignored


def test_negation_and_nested_ignore_files_follow_git_precedence(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.gen\n!keep.gen\n# comment\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("keep.gen\nlocal/\n")
    (tmp_path / "sub" / "local").mkdir()
    (tmp_path / ".git" / "info").mkdir(parents=True)
    (tmp_path / ".git" / "info" / "exclude").write_text("secret.txt\n")
    for name in ("a.gen", "keep.gen", "sub/keep.gen", "sub/local/x.py", "sub/y.py", "secret.txt", "z.py"):
        (tmp_path / name).write_text("x\n")
    fd = os.open(tmp_path, DIR_FLAGS)
    try:
        assert sorted(visible_files(fd)) == [".gitignore", "keep.gen", "sub/.gitignore", "sub/y.py", "z.py"]
        assert sorted(visible_files(fd, "sub")) == ["sub/.gitignore", "sub/y.py"]
    finally:
        os.close(fd)


def test_a_pathological_ignore_pattern_matches_in_bounded_time() -> None:
    rules = parse_ignore_file("*a*a*a*a*a*a*a*a*a*a*b\n", "")
    assert not is_ignored(rules, "a" * 250, False)
