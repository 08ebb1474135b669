"""Adversarial path corpus: nothing outside the workspace root is ever read or written."""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from ws_helpers import SENTINEL, OutsideGuard, call, execute, prepare

from protoagent.errors import ToolRejected
from protoagent.tools.base import ToolContext
from protoagent.workspace.files import ensure_not_protected, make_dirs_beneath, read_bytes, write_atomic
from protoagent.workspace.paths import (
    Resolver,
    normalize_relpath,
    open_beneath,
    open_dir_beneath,
    open_root,
    openat2_available,
)
from protoagent.workspace.tools import (
    CreateFileTool,
    EditFileTool,
    ListDirectoryTool,
    ReadFileTool,
    ReplaceFileTool,
    SearchRegexTool,
)

RESOLVERS: list[Resolver] = ["walk", "openat2"] if openat2_available() else ["walk"]

ESCAPES = [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "link_file",
    "abs_link",
    "link_dir/secret.txt",
    "sub/up/outside/secret.txt",
    "sub/deep_link/secret.txt",
]
LOOKALIKES = [
    "..\u2215outside\u2215secret.txt",
    "..\uff0foutside\uff0fsecret.txt",
    "\u2025/outside/secret.txt",
    "\uff0e\uff0e/outside/secret.txt",
    "..\\outside\\secret.txt",
]


@pytest.fixture
def corpus_root(root: Path, outside: OutsideGuard) -> Path:
    """A root full of traps: symlinks to files and dirs outside, dot-dot links, a loop."""
    (root / "inside.txt").write_text("inside\n")
    (root / "sub").mkdir()
    (root / "link_file").symlink_to("../outside/secret.txt")
    (root / "abs_link").symlink_to(outside.path / "secret.txt")
    (root / "link_dir").symlink_to("../outside")
    (root / "sub" / "up").symlink_to("../..")
    (root / "sub" / "deep_link").symlink_to("../link_dir")
    (root / "inner_link").symlink_to("sub/../inside.txt")
    (root / "loop").symlink_to("loop")
    return root


@pytest.fixture
def root_fd(corpus_root: Path) -> Iterator[int]:
    with open_root(corpus_root) as fd:
        yield fd


@pytest.mark.parametrize("resolver", RESOLVERS)
@pytest.mark.parametrize("path", ESCAPES)
def test_open_beneath_refuses_every_escape(root_fd: int, outside: OutsideGuard, resolver: Resolver, path: str):
    with pytest.raises(ToolRejected) as caught:
        open_beneath(root_fd, path, os.O_RDONLY, resolver=resolver)
    assert caught.value.kind == "path_outside_workspace"
    outside.assert_unchanged()


@pytest.mark.parametrize("resolver", RESOLVERS)
def test_open_beneath_refuses_absolute_path(root_fd: int, outside: OutsideGuard, resolver: Resolver):
    with pytest.raises(ToolRejected) as caught:
        open_beneath(root_fd, str(outside.path / "secret.txt"), os.O_RDONLY, resolver=resolver)
    assert caught.value.kind == "path_outside_workspace"


@pytest.mark.parametrize("resolver", RESOLVERS)
def test_open_beneath_creating_through_symlinked_dir_creates_nothing_outside(
    root_fd: int, outside: OutsideGuard, resolver: Resolver
):
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    with pytest.raises(ToolRejected, match="outside the workspace"):
        open_beneath(root_fd, "link_dir/planted.txt", flags, resolver=resolver)
    assert not (outside.path / "planted.txt").exists()
    outside.assert_unchanged()


@pytest.mark.parametrize("resolver", RESOLVERS)
@pytest.mark.parametrize("path", ["inner_link", "sub/../inside.txt", "./inside.txt"])
def test_links_and_dots_that_stay_inside_are_followed(root_fd: int, resolver: Resolver, path: str):
    fd = open_beneath(root_fd, path, os.O_RDONLY, resolver=resolver)
    try:
        assert os.read(fd, 100) == b"inside\n"
    finally:
        os.close(fd)


@pytest.mark.parametrize("resolver", RESOLVERS)
def test_symlink_loop_is_refused(root_fd: int, resolver: Resolver):
    with pytest.raises(OSError, match="symbolic links") as caught:
        open_beneath(root_fd, "loop", os.O_RDONLY, resolver=resolver)
    assert caught.value.errno == errno.ELOOP


def test_symlink_loop_is_feedback_for_the_model(corpus_root: Path, ctx: ToolContext):
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path="loop")
    assert caught.value.kind == "symlink_loop"


@pytest.mark.parametrize("resolver", RESOLVERS)
def test_symlink_swapped_in_after_a_check_is_refused_at_open(
    corpus_root: Path, root_fd: int, outside: OutsideGuard, resolver: Resolver
):
    benign = corpus_root / "benign"
    benign.mkdir()
    (benign / "secret.txt").write_text("benign\n")
    # A string check passes while the directory is benign ...
    checked = os.path.realpath(benign / "secret.txt")
    assert checked.startswith(str(corpus_root) + os.sep)
    # ... then the directory is swapped for a symlink to outside before the open.
    benign.rename(corpus_root / "benign.old")
    benign.symlink_to(outside.path)
    with pytest.raises(ToolRejected) as caught:
        open_beneath(root_fd, "benign/secret.txt", os.O_RDONLY, resolver=resolver)
    assert caught.value.kind == "path_outside_workspace"
    outside.assert_unchanged()


def test_directory_moved_outside_after_open_is_refused_before_write(
    corpus_root: Path, root_fd: int, outside: OutsideGuard
):
    (corpus_root / "moving").mkdir()
    dir_fd = open_dir_beneath(root_fd, "moving")
    try:
        (corpus_root / "moving").rename(outside.path / "moved")
        with pytest.raises(ToolRejected) as caught:
            ensure_not_protected(root_fd, dir_fd, "moving/x.txt")
    finally:
        os.close(dir_fd)
    assert caught.value.kind == "path_outside_workspace"


def test_file_helpers_refuse_escapes(root_fd: int, outside: OutsideGuard):
    with pytest.raises(ToolRejected, match="outside the workspace"):
        read_bytes(root_fd, "link_file")
    with pytest.raises(ToolRejected, match="outside the workspace"):
        write_atomic(root_fd, "link_dir/new.txt", b"x", create=True)
    with pytest.raises(ToolRejected, match="outside the workspace"):
        os.close(make_dirs_beneath(root_fd, "link_dir/a/b"))
    assert not (outside.path / "a").exists()
    outside.assert_unchanged()


@pytest.mark.parametrize("path", ["..", "../outside", "a/../../x", "/etc/passwd"])
def test_normalize_refuses_dot_dot_and_absolute_outside(root: Path, path: str):
    with pytest.raises(ToolRejected) as caught:
        normalize_relpath(root, path)
    assert caught.value.kind == "path_outside_workspace"


def test_normalize_joins_relative_and_accepts_absolute_inside(root: Path):
    assert normalize_relpath(root, "a/./b/../c.py") == "a/c.py"
    assert normalize_relpath(root, str(root / "pkg" / "m.py")) == "pkg/m.py"
    assert normalize_relpath(root, str(root)) == "."
    assert normalize_relpath(root, "") == "."


@pytest.mark.parametrize("path", LOOKALIKES)
def test_unicode_lookalike_separators_are_refused(root: Path, ctx: ToolContext, outside: OutsideGuard, path: str):
    with pytest.raises(ToolRejected) as caught:
        normalize_relpath(root, path)
    assert caught.value.kind == "invalid_path"
    with pytest.raises(ToolRejected):
        call(CreateFileTool, ctx, path=path, content="planted\n")
    with pytest.raises(ToolRejected):
        call(ReadFileTool, ctx, path=path)
    assert list(root.iterdir()) == []
    outside.assert_unchanged()


@pytest.mark.parametrize("path", [*ESCAPES, "../outside/secret.txt"])
def test_read_tools_never_read_outside(corpus_root: Path, ctx: ToolContext, outside: OutsideGuard, path: str):
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path=path)
    assert caught.value.kind == "path_outside_workspace"
    assert SENTINEL.decode() not in caught.value.message


def test_read_tool_refuses_absolute_path_outside(corpus_root: Path, ctx: ToolContext, outside: OutsideGuard):
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path=str(outside.path / "sentinel.txt"))
    assert caught.value.kind == "path_outside_workspace"


def test_listing_and_search_stay_inside(corpus_root: Path, ctx: ToolContext, outside: OutsideGuard):
    with pytest.raises(ToolRejected, match="outside the workspace"):
        call(ListDirectoryTool, ctx, path="link_dir")
    with pytest.raises(ToolRejected, match="outside the workspace"):
        call(SearchRegexTool, ctx, pattern="SENTINEL", path="link_dir")
    found = call(SearchRegexTool, ctx, pattern="SENTINEL|inside")
    assert sorted(m["path"] for m in found.data["matches"]) == ["inner_link", "inside.txt"]


@pytest.mark.parametrize("path", ESCAPES)
def test_write_tools_never_write_outside(corpus_root: Path, ctx: ToolContext, outside: OutsideGuard, path: str):
    revision = hashlib.sha256(SENTINEL).hexdigest()
    attempts = [
        (EditFileTool, {"old": "SENTINEL", "new": "PWNED", "expected_revision": revision}),
        (ReplaceFileTool, {"content": "PWNED\n", "expected_revision": revision}),
        (CreateFileTool, {"content": "PWNED\n"}),
    ]
    for tool_cls, args in attempts:
        with pytest.raises(ToolRejected) as caught:
            call(tool_cls, ctx, path=path, **args)
        assert caught.value.kind in {"path_outside_workspace", "file_exists"}
    with pytest.raises(ToolRejected, match="outside the workspace"):
        call(CreateFileTool, ctx, path="link_dir/planted.txt", content="PWNED\n")
    outside.assert_unchanged()


def test_edit_refuses_when_parent_is_swapped_for_symlink_between_prepare_and_execute(
    root: Path, ctx: ToolContext, outside: OutsideGuard
):
    (root / "pkg").mkdir()
    (outside.path / "mod.py").write_text("x = 1\n")
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    outside_before = outside.snapshot()
    read = call(ReadFileTool, ctx, path="pkg/mod.py")
    revision = read.data["revision"]
    prepared = prepare(EditFileTool, ctx, path="pkg/mod.py", old="x = 1", new="x = 2", expected_revision=revision)
    (root / "pkg").rename(root / "pkg.old")
    (root / "pkg").symlink_to(outside.path)
    with pytest.raises(ToolRejected) as caught:
        execute(EditFileTool, prepared, ctx)
    assert caught.value.kind == "path_outside_workspace"
    assert outside.snapshot() == outside_before
    assert (outside.path / "mod.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("path", [".git/config", ".GIT/config", ".protoagent/project.json", "sub/.git/HEAD"])
def test_git_and_protoagent_dirs_are_read_only(root: Path, ctx: ToolContext, path: str):
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("[core]\n")
    read = call(ReadFileTool, ctx, path=path)
    assert "[core]" in read.text
    revision = read.data["revision"]
    for tool_cls, args in [
        (EditFileTool, {"old": "[core]", "new": "[hooks]", "expected_revision": revision}),
        (ReplaceFileTool, {"content": "x\n", "expected_revision": revision}),
    ]:
        with pytest.raises(ToolRejected) as caught:
            call(tool_cls, ctx, path=path, **args)
        assert caught.value.kind == "read_only_path"
    with pytest.raises(ToolRejected) as created:
        call(CreateFileTool, ctx, path=str(Path(path).parent / "hooks" / "post-commit"), content="#!/bin/sh\n")
    assert created.value.kind == "read_only_path"
    assert target.read_text() == "[core]\n"
    assert not (target.parent / "hooks").exists()


def test_symlink_alias_of_git_dir_is_read_only(root: Path, ctx: ToolContext):
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    (root / "alias").symlink_to(".git")
    revision = call(ReadFileTool, ctx, path="alias/config").data["revision"]
    with pytest.raises(ToolRejected) as edited:
        call(EditFileTool, ctx, path="alias/config", old="[core]", new="[x]", expected_revision=revision)
    assert edited.value.kind == "read_only_path"
    with pytest.raises(ToolRejected) as created:
        call(CreateFileTool, ctx, path="alias/hooks/pre-commit", content="#!/bin/sh\n")
    assert created.value.kind == "read_only_path"
    assert (root / ".git" / "config").read_text() == "[core]\n"
    assert not (root / ".git" / "hooks").exists()
