"""create_file and replace_file: new files only, whole-file replacement under a revision guard."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from ws_helpers import call, execute, prepare

from protoagent.errors import ToolRejected
from protoagent.tools.base import ToolContext
from protoagent.workspace.tools import CreateFileTool, ReplaceFileTool


def _revision(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_create_file_makes_parent_dirs_beneath_root(root: Path, ctx: ToolContext):
    prepared = prepare(CreateFileTool, ctx, path="pkg/sub/new.py", content="x = 1\n")
    assert prepared.preview == "--- /dev/null\n+++ b/pkg/sub/new.py\n@@ -0,0 +1 @@\n+x = 1\n"
    assert not (root / "pkg").exists()  # prepare writes nothing
    out = execute(CreateFileTool, prepared, ctx)
    assert (root / "pkg" / "sub" / "new.py").read_text() == "x = 1\n"
    assert out.data["source_revision"] == _revision(b"x = 1\n")


def test_create_file_refuses_existing_file(root: Path, ctx: ToolContext):
    (root / "here.txt").write_text("keep\n")
    with pytest.raises(ToolRejected) as caught:
        prepare(CreateFileTool, ctx, path="here.txt", content="overwrite\n")
    assert caught.value.kind == "file_exists"
    assert (root / "here.txt").read_text() == "keep\n"


def test_create_file_refuses_file_that_appears_between_prepare_and_execute(root: Path, ctx: ToolContext):
    prepared = prepare(CreateFileTool, ctx, path="race.txt", content="mine\n")
    (root / "race.txt").write_text("theirs\n")
    with pytest.raises(ToolRejected) as caught:
        execute(CreateFileTool, prepared, ctx)
    assert caught.value.kind == "file_exists"
    assert (root / "race.txt").read_text() == "theirs\n"
    assert sorted(p.name for p in root.iterdir()) == ["race.txt"]


def test_create_file_under_a_regular_file_is_rejected(root: Path, ctx: ToolContext):
    (root / "plain").write_text("file\n")
    with pytest.raises(ToolRejected) as caught:
        call(CreateFileTool, ctx, path="plain/child.txt", content="x\n")
    assert caught.value.kind == "not_found"


def test_replace_file_requires_current_revision(root: Path, ctx: ToolContext):
    (root / "cfg.toml").write_text("a = 1\n")
    with pytest.raises(ToolRejected) as caught:
        call(ReplaceFileTool, ctx, path="cfg.toml", content="a = 2\n", expected_revision=_revision(b"a = 0\n"))
    assert caught.value.kind == "stale_revision"
    out = call(ReplaceFileTool, ctx, path="cfg.toml", content="a = 2\n", expected_revision=_revision(b"a = 1\n"))
    assert (root / "cfg.toml").read_text() == "a = 2\n"
    assert out.data["revision_before"] == _revision(b"a = 1\n")
    assert out.data["source_revision"] == _revision(b"a = 2\n")


def test_replace_file_preview_is_whole_file_diff(root: Path, ctx: ToolContext):
    (root / "f.txt").write_text("one\ntwo\n")
    prepared = prepare(
        ReplaceFileTool, ctx, path="f.txt", content="one\n2\n", expected_revision=_revision(b"one\ntwo\n")
    )
    assert prepared.preview == "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    assert prepared.effect == "write"


def test_replace_file_keeps_crlf_line_endings(root: Path, ctx: ToolContext):
    original = b"x\r\ny\r\n"
    (root / "w.txt").write_bytes(original)
    call(ReplaceFileTool, ctx, path="w.txt", content="x\nz\n", expected_revision=_revision(original))
    assert (root / "w.txt").read_bytes() == b"x\r\nz\r\n"


def test_replace_file_with_same_content_is_no_change(root: Path, ctx: ToolContext):
    (root / "f.txt").write_text("same\n")
    with pytest.raises(ToolRejected) as caught:
        prepare(ReplaceFileTool, ctx, path="f.txt", content="same\n", expected_revision=_revision(b"same\n"))
    assert caught.value.kind == "no_change"


def test_replace_missing_file_is_rejected(root: Path, ctx: ToolContext):
    with pytest.raises(ToolRejected) as caught:
        prepare(ReplaceFileTool, ctx, path="nope.txt", content="x\n", expected_revision="0" * 64)
    assert caught.value.kind == "not_found"
    assert not (root / "nope.txt").exists()
