"""read_file: one span, the full-file revision, pagination, caps and refusals."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from ws_helpers import call

from protoagent.errors import ToolRejected
from protoagent.tools.base import ToolContext
from protoagent.tools.services import RunServices
from protoagent.workspace.tools import ReadFileTool


def _numbered_file(root: Path, count: int, width: int = 30) -> bytes:
    data = "".join(f"line {n:06d} " + "x" * width + "\n" for n in range(1, count + 1)).encode()
    (root / "big.txt").write_bytes(data)
    return data


def test_read_returns_span_revision_and_pagination_metadata(root: Path, ctx: ToolContext):
    data = b"a\nb\nc\nd\n"
    (root / "f.txt").write_bytes(data)
    out = call(ReadFileTool, ctx, path="f.txt", start_line=2, end_line=3)
    assert out.data["revision"] == hashlib.sha256(data).hexdigest()
    assert out.data["content"] == "   2| b\n   3| c\n"
    assert out.data["start_line"] == 2
    assert out.data["end_line"] == 3
    assert out.data["total_lines"] == 4
    assert out.data["next_start_line"] == 4
    assert out.data["truncated_long_line"] is False
    assert out.data["revision"] in out.text


def test_read_to_end_of_file_has_no_next_start_line(root: Path, ctx: ToolContext):
    (root / "f.txt").write_text("a\nb")
    out = call(ReadFileTool, ctx, path="f.txt")
    assert out.data["next_start_line"] is None
    assert out.data["total_lines"] == 2
    assert out.data["content"] == "   1| a\n   2| b"


def test_small_profile_read_is_capped_at_4000_chars(root: Path, make_ctx: Callable[..., ToolContext]):
    _numbered_file(root, 1000)
    out = call(ReadFileTool, make_ctx(role="coder", profile="small"), path="big.txt")
    content = out.data["content"]
    assert 3900 < len(content) <= 4000
    assert out.data["truncated"] is True
    assert out.data["next_start_line"] == out.data["end_line"] + 1
    assert content.endswith("\n")  # Whole lines only.


def test_standard_profile_read_is_capped_at_20000_chars_or_8192_under_a_known_small_window(
    root: Path, make_ctx: Callable[..., ToolContext]
) -> None:
    _numbered_file(root, 2000)
    out = call(ReadFileTool, make_ctx(role="explorer"), path="big.txt")
    assert 19_800 < len(out.data["content"]) <= 20_000
    narrow = replace(make_ctx(role="explorer"), services=RunServices(context_window=16_384))
    assert 8000 < len(call(ReadFileTool, narrow, path="big.txt").data["content"]) <= 8192
    assert out.data["truncated"] is True


def test_paginated_reads_cover_the_whole_file(root: Path, make_ctx: Callable[..., ToolContext]):
    data = _numbered_file(root, 700)
    ctx = make_ctx(role="coder", profile="small")
    pages: list[str] = []
    start: int | None = 1
    while start is not None:
        out = call(ReadFileTool, ctx, path="big.txt", start_line=start)
        pages.append(out.data["content"])
        start = out.data["next_start_line"]
    assert "".join(pages).encode() == data
    assert len(pages) > 5


def test_small_profile_coder_gets_raw_text_every_other_reader_numbered_lines(
    root: Path, make_ctx: Callable[..., ToolContext]
):
    (root / "m.py").write_text("def f():\n    return 1\n")
    raw = call(ReadFileTool, make_ctx(role="coder", profile="small"), path="m.py")
    assert raw.data["content"] == "def f():\n    return 1\n"
    for role in ("coder", "explorer", "tester", "architect", "main"):
        numbered = call(ReadFileTool, make_ctx(role=role), path="m.py")
        assert numbered.data["content"] == "   1| def f():\n   2|     return 1\n"


def test_partial_long_line_is_marked_explicitly(root: Path, make_ctx: Callable[..., ToolContext]):
    (root / "min.js").write_text("short\n" + "y" * 20000 + "\nafter\n")
    ctx = make_ctx(role="coder", profile="small")
    first = call(ReadFileTool, ctx, path="min.js")
    assert first.data["content"] == "short\n"
    assert first.data["next_start_line"] == 2
    long = call(ReadFileTool, ctx, path="min.js", start_line=2)
    assert long.data["truncated_long_line"] is True
    assert "[line 2 truncated: showed its first" in long.data["content"]
    assert "of 20000 characters" in long.data["content"]
    assert len(long.data["content"]) <= 4000
    assert long.data["next_start_line"] == 3


def test_file_over_8_mib_is_refused(root: Path, ctx: ToolContext):
    (root / "huge.txt").write_bytes(b"z" * (8 * 1024 * 1024 + 1))
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path="huge.txt")
    assert caught.value.kind == "file_too_large"


def test_file_of_exactly_8_mib_is_readable(root: Path, ctx: ToolContext):
    (root / "edge.txt").write_bytes((b"z" * 1023 + b"\n") * 8 * 1024)
    out = call(ReadFileTool, ctx, path="edge.txt", start_line=8192)
    assert out.data["total_lines"] == 8192
    assert out.data["next_start_line"] is None


def test_binary_file_is_refused(root: Path, ctx: ToolContext):
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path="img.png")
    assert caught.value.kind == "binary_file"


def test_undecodable_utf8_file_is_refused_as_binary(root: Path, ctx: ToolContext):
    (root / "latin1.txt").write_bytes("café\n".encode("latin-1"))
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path="latin1.txt")
    assert caught.value.kind == "binary_file"


def test_crlf_file_is_shown_with_lf_and_reported_as_crlf(root: Path, make_ctx: Callable[..., ToolContext]):
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\n")
    out = call(ReadFileTool, make_ctx(role="coder", profile="small"), path="w.txt")
    assert out.data["content"] == "one\ntwo\n"
    assert out.data["line_endings"] == "crlf"
    assert out.data["revision"] == hashlib.sha256(b"one\r\ntwo\r\n").hexdigest()


def test_start_line_past_end_is_rejected(root: Path, ctx: ToolContext):
    (root / "f.txt").write_text("a\nb\n")
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path="f.txt", start_line=3)
    assert caught.value.kind == "line_out_of_range"
    assert caught.value.details["total_lines"] == 2


def test_empty_file_reads_as_empty_span(root: Path, ctx: ToolContext):
    (root / "empty.txt").write_bytes(b"")
    out = call(ReadFileTool, ctx, path="empty.txt")
    assert out.data["content"] == ""
    assert out.data["total_lines"] == 0
    assert out.data["revision"] == hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize(("make", "kind"), [("dir", "is_directory"), ("missing", "not_found")])
def test_directory_and_missing_file_are_rejected(root: Path, ctx: ToolContext, make: str, kind: str):
    if make == "dir":
        (root / "target").mkdir()
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path="target")
    assert caught.value.kind == kind


def test_fifo_is_refused_without_blocking(root: Path, ctx: ToolContext):
    os.mkfifo(root / "pipe")
    with pytest.raises(ToolRejected) as caught:
        call(ReadFileTool, ctx, path="pipe")
    assert caught.value.kind == "not_regular_file"


def test_span_deep_in_a_crlf_file_starts_at_the_right_line(root: Path, make_ctx: Callable[..., ToolContext]):
    (root / "w.txt").write_bytes(b"".join(b"row %d\r\n" % n for n in range(1, 100001)))
    out = call(ReadFileTool, make_ctx(role="coder", profile="small"), path="w.txt", start_line=99998, end_line=99999)
    assert out.data["content"] == "row 99998\nrow 99999\n"
    assert out.data["next_start_line"] == 100000
    assert out.data["total_lines"] == 100000
