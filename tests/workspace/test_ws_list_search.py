"""list_directory and search_regex: bounded results, .git, binary and git-ignored files skipped."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from ws_helpers import call, prepare

from protoagent.errors import ToolRejected
from protoagent.tools.base import ToolContext
from protoagent.workspace.tools import WORKSPACE_TOOLS, ListDirectoryTool, SearchRegexTool

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git_init(root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=env)


def test_list_directory_marks_dirs_and_symlinks(root: Path, ctx: ToolContext):
    (root / "src").mkdir()
    (root / "README.md").write_text("hi\n")
    (root / "link").symlink_to("README.md")
    out = call(ListDirectoryTool, ctx)
    assert out.data["entries"] == ["README.md", "link@", "src/"]
    assert out.text == "README.md\nlink@\nsrc/"


def test_list_directory_is_bounded(root: Path, ctx: ToolContext):
    for n in range(450):
        (root / f"f{n:03d}.txt").write_text("")
    out = call(ListDirectoryTool, ctx, path=".")
    assert len(out.data["entries"]) == 400
    assert out.data["total"] == 450
    assert out.data["truncated"] is True
    assert "[50 more entries not shown]" in out.text


def test_list_directory_of_a_file_is_rejected(root: Path, ctx: ToolContext):
    (root / "f.txt").write_text("")
    with pytest.raises(ToolRejected) as caught:
        call(ListDirectoryTool, ctx, path="f.txt")
    assert caught.value.kind == "not_found"


@needs_git
def test_search_regex_skips_git_binary_and_gitignored_files(root: Path, ctx: ToolContext):
    _git_init(root)
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("TODO: tracked\n")
    (root / "notes.md").write_text("nothing\nTODO: untracked but not ignored\n")
    (root / "build").mkdir()
    (root / "build" / "out.py").write_text("TODO: ignored dir\n")
    (root / "debug.log").write_text("TODO: ignored file\n")
    (root / "blob.bin").write_bytes(b"\x00TODO: binary\n")
    (root / ".git" / "TODO_NOTE").write_text("TODO: inside .git\n")
    out = call(SearchRegexTool, ctx, pattern=r"TODO: \w+")
    assert [(m["path"], m["line"]) for m in out.data["matches"]] == [("notes.md", 2), ("src/app.py", 1)]
    assert out.text == "notes.md:2: TODO: untracked but not ignored\nsrc/app.py:1: TODO: tracked"


def test_search_regex_without_git_still_skips_dot_git(root: Path, ctx: ToolContext):
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("needle\n")
    (root / "a.txt").write_text("needle\n")
    out = call(SearchRegexTool, ctx, pattern="needle")
    assert [m["path"] for m in out.data["matches"]] == ["a.txt"]


def test_search_regex_results_are_bounded(root: Path, ctx: ToolContext):
    (root / "many.txt").write_text("hit\n" * 150)
    out = call(SearchRegexTool, ctx, pattern="hit")
    assert len(out.data["matches"]) == 100
    assert out.data["truncated"] is True
    assert "results cut short" in out.text


def test_search_regex_file_filter_and_path(root: Path, ctx: ToolContext):
    (root / "pkg").mkdir()
    (root / "pkg" / "a.py").write_text("x = 1\n")
    (root / "pkg" / "b.txt").write_text("x = 1\n")
    (root / "c.py").write_text("x = 1\n")
    out = call(SearchRegexTool, ctx, pattern=r"x = \d", path="pkg", file_filter="*.py")
    assert [m["path"] for m in out.data["matches"]] == ["pkg/a.py"]
    single = call(SearchRegexTool, ctx, pattern="x", path="c.py")
    assert [m["path"] for m in single.data["matches"]] == ["c.py"]


def test_invalid_regex_is_rejected(root: Path, ctx: ToolContext):
    with pytest.raises(ToolRejected) as caught:
        prepare(SearchRegexTool, ctx, pattern="(unclosed")
    assert caught.value.kind == "invalid_regex"


def test_tool_schemas_are_compact_and_named(root: Path):
    names = [tool().schema().name for tool in WORKSPACE_TOOLS]
    assert names == ["read_file", "edit_file", "create_file", "replace_file", "list_directory", "search_regex"]
    for tool in WORKSPACE_TOOLS:
        schema = tool().schema().parameters
        assert "title" not in schema
        for prop in schema["properties"].values():
            assert "title" not in prop
            assert "anyOf" not in prop
            assert len(prop.get("description", "")) <= 90
    read = next(t for t in WORKSPACE_TOOLS if t.name == "read_file")
    assert read.metadata.observation == "revision_aware"
    writes = [t for t in WORKSPACE_TOOLS if t.metadata.effect == "write"]
    assert {t.name for t in writes} == {"edit_file", "create_file", "replace_file"}
    assert all(t.metadata.presentation == "diff" for t in writes)
