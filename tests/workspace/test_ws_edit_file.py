"""edit_file: exactly one occurrence, revision guards, feedback before approval, line endings."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from ws_helpers import call, execute, prepare

from protoagent.errors import ToolRejected
from protoagent.tools.base import ToolContext
from protoagent.workspace.tools import EditFileTool, ReadFileTool

SOURCE = "import os\n\n\ndef greet(name):\n    return 'hello ' + name\n\n\ndef main():\n    print(greet('x'))\n"


def _revision(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def source(root: Path) -> Path:
    path = root / "app.py"
    path.write_text(SOURCE)
    return path


def test_edit_replaces_exactly_one_occurrence_and_keeps_rest_intact(source: Path, ctx: ToolContext):
    revision = call(ReadFileTool, ctx, path="app.py").data["revision"]
    out = call(
        EditFileTool,
        ctx,
        path="app.py",
        old="return 'hello ' + name",
        new="return f'hi {name}'",
        expected_revision=revision,
    )
    expected = SOURCE.replace("return 'hello ' + name", "return f'hi {name}'")
    assert source.read_text() == expected
    assert out.data == {
        "path": "app.py",
        "revision_before": revision,
        "source_revision": _revision(expected.encode()),
        "lines_added": 1,
        "lines_removed": 1,
        "preimage": SOURCE,
        "afterimage": expected,
    }


def test_valid_edit_prepare_returns_diff_preview_and_writes_nothing(source: Path, ctx: ToolContext):
    prepared = prepare(
        EditFileTool,
        ctx,
        path="app.py",
        old="print(greet('x'))",
        new="print(greet('y'))",
        expected_revision=_revision(SOURCE.encode()),
    )
    assert prepared.effect == "write"
    assert prepared.paths == ("app.py",)
    assert prepared.preview.startswith("--- a/app.py\n+++ b/app.py\n@@ -6,4 +6,4 @@\n")
    assert "-    print(greet('x'))\n+    print(greet('y'))\n" in prepared.preview
    assert source.read_text() == SOURCE


def test_edit_preview_uses_real_line_numbers_deep_in_a_file(root: Path, ctx: ToolContext):
    text = "".join(f"value_{n} = {n}\n" for n in range(1, 501))
    (root / "vals.py").write_text(text)
    prepared = prepare(
        EditFileTool,
        ctx,
        path="vals.py",
        old="value_400 = 400\n",
        new="value_400 = -400\n",
        expected_revision=_revision(text.encode()),
    )
    assert "@@ -397,7 +397,7 @@" in prepared.preview
    assert "-value_400 = 400\n+value_400 = -400\n" in prepared.preview


def test_edit_with_stale_revision_is_rejected_before_approval(source: Path, ctx: ToolContext):
    revision = _revision(SOURCE.encode())
    source.write_text(SOURCE + "# changed by someone else\n")
    with pytest.raises(ToolRejected) as caught:
        prepare(EditFileTool, ctx, path="app.py", old="import os", new="import sys", expected_revision=revision)
    assert caught.value.kind == "stale_revision"
    assert caught.value.details["current_revision"] == _revision(source.read_bytes())
    assert source.read_text().startswith("import os")


def test_ambiguous_old_text_is_rejected_before_approval(source: Path, ctx: ToolContext):
    with pytest.raises(ToolRejected) as caught:
        prepare(
            EditFileTool,
            ctx,
            path="app.py",
            old="\n\n\ndef ",
            new="\n\n\nasync def ",
            expected_revision=_revision(SOURCE.encode()),
        )
    assert caught.value.kind == "ambiguous_match"
    assert caught.value.details["match_lines"] == [1, 5]
    assert source.read_text() == SOURCE


def test_overlapping_occurrences_count_as_ambiguous(root: Path, ctx: ToolContext):
    (root / "a.txt").write_text("aaa\n")
    with pytest.raises(ToolRejected) as caught:
        prepare(EditFileTool, ctx, path="a.txt", old="aa", new="b", expected_revision=_revision(b"aaa\n"))
    assert caught.value.kind == "ambiguous_match"


def test_missing_old_text_feedback_names_closest_region(source: Path, ctx: ToolContext):
    with pytest.raises(ToolRejected) as caught:
        prepare(
            EditFileTool,
            ctx,
            path="app.py",
            old="def greet(name):\n  return 'hello ' + name\n",  # Wrong indentation.
            new="def greet(name):\n    return name\n",
            expected_revision=_revision(SOURCE.encode()),
        )
    rejection = caught.value
    assert rejection.kind == "no_match"
    closest = rejection.details["closest_match"]
    assert (closest["start_line"], closest["end_line"]) == (4, 5)
    assert closest["text"] == "def greet(name):\n    return 'hello ' + name"
    assert "lines 4-5" in rejection.message
    assert "   5|     return 'hello ' + name" in rejection.message
    assert source.read_text() == SOURCE


def test_closest_region_is_found_quickly_in_a_large_file(root: Path, ctx: ToolContext):
    lines = [f"def handler_{n}(request):\n    return respond(request, code={n})\n" for n in range(20000)]
    text = "".join(lines)
    (root / "big.py").write_text(text)
    with pytest.raises(ToolRejected) as caught:
        prepare(
            EditFileTool,
            ctx,
            path="big.py",
            old="def handler_12345(request):\n    return respond(req, code=12345)",
            new="pass",
            expected_revision=_revision(text.encode()),
        )
    assert caught.value.details["closest_match"]["start_line"] == 2 * 12345 + 1


def test_identical_old_and_new_is_rejected_as_no_change(source: Path, ctx: ToolContext):
    with pytest.raises(ToolRejected) as caught:
        prepare(
            EditFileTool,
            ctx,
            path="app.py",
            old="import os",
            new="import os",
            expected_revision=_revision(SOURCE.encode()),
        )
    assert caught.value.kind == "no_change"


def test_edit_rejected_when_file_changes_between_prepare_and_execute(source: Path, ctx: ToolContext):
    prepared = prepare(
        EditFileTool,
        ctx,
        path="app.py",
        old="import os",
        new="import sys",
        expected_revision=_revision(SOURCE.encode()),
    )
    source.write_text(SOURCE.replace("main", "run"))
    with pytest.raises(ToolRejected) as caught:
        execute(EditFileTool, prepared, ctx)
    assert caught.value.kind == "stale_revision"
    assert source.read_text() == SOURCE.replace("main", "run")


def test_next_edit_uses_returned_source_revision_without_reading(source: Path, ctx: ToolContext):
    first = call(
        EditFileTool,
        ctx,
        path="app.py",
        old="import os",
        new="import sys",
        expected_revision=_revision(SOURCE.encode()),
    )
    second = call(
        EditFileTool,
        ctx,
        path="app.py",
        old="greet('x')",
        new="greet('z')",
        expected_revision=first.data["source_revision"],
    )
    assert second.data["revision_before"] == first.data["source_revision"]
    assert source.read_text().startswith("import sys\n")
    assert "greet('z')" in source.read_text()
    with pytest.raises(ToolRejected) as caught:
        call(
            EditFileTool,
            ctx,
            path="app.py",
            old="import sys",
            new="import re",
            expected_revision=first.data["source_revision"],
        )
    assert caught.value.kind == "stale_revision"


def test_revision_prefix_of_eight_hex_is_accepted_shorter_is_stale(source: Path, ctx: ToolContext):
    revision = _revision(SOURCE.encode())
    with pytest.raises(ToolRejected) as caught:
        prepare(EditFileTool, ctx, path="app.py", old="import os", new="import re", expected_revision=revision[:7])
    assert caught.value.kind == "stale_revision"
    prepared = prepare(
        EditFileTool, ctx, path="app.py", old="import os", new="import re", expected_revision=revision[:8].upper()
    )
    assert prepared.state.revision_before == revision


def test_edit_keeps_crlf_line_endings(root: Path, make_ctx: Callable[..., ToolContext]):
    ctx = make_ctx(role="coder")
    original = b"first\r\nsecond\r\nthird\r\n"
    (root / "win.txt").write_bytes(original)
    read = call(ReadFileTool, ctx, path="win.txt")
    old = read.data["content"].split("third")[0]  # "first\nsecond\n" copied from the raw read.
    out = call(
        EditFileTool,
        ctx,
        path="win.txt",
        old=old,
        new="first\nmiddle\nsecond\n",
        expected_revision=read.data["revision"],
    )
    written = (root / "win.txt").read_bytes()
    assert written == b"first\r\nmiddle\r\nsecond\r\nthird\r\n"
    assert out.data["source_revision"] == _revision(written)


def test_edit_in_mixed_line_endings_file_keeps_other_lines(root: Path, ctx: ToolContext):
    original = b"a\r\nb\nc\r\nd\ne\r\n"
    (root / "mixed.txt").write_bytes(original)
    call(EditFileTool, ctx, path="mixed.txt", old="c\nd", new="C\nD", expected_revision=_revision(original))
    assert (root / "mixed.txt").read_bytes() == b"a\r\nb\nC\r\nD\ne\r\n"


def test_edit_keeps_file_mode_and_leaves_no_temp_files(source: Path, ctx: ToolContext):
    os.chmod(source, 0o750)
    call(
        EditFileTool, ctx, path="app.py", old="import os", new="import re", expected_revision=_revision(SOURCE.encode())
    )
    assert stat.S_IMODE(source.stat().st_mode) == 0o750
    assert sorted(p.name for p in source.parent.iterdir()) == ["app.py"]


def test_edit_of_symlink_inside_root_names_its_target(source: Path, ctx: ToolContext):
    (source.parent / "alias.py").symlink_to("app.py")
    with pytest.raises(ToolRejected) as caught:
        prepare(
            EditFileTool,
            ctx,
            path="alias.py",
            old="import os",
            new="import re",
            expected_revision=_revision(SOURCE.encode()),
        )
    assert caught.value.kind == "symlink_write_refused"
    assert "'app.py'" in caught.value.message
    assert (source.parent / "alias.py").is_symlink()


def test_an_empty_old_appends_new_at_the_end_without_a_copy_of_the_last_lines(source: Path, ctx: ToolContext):
    tail = "\n\ndef bye(name):\n    return 'bye ' + name\n"
    out = call(EditFileTool, ctx, path="app.py", old="", new=tail, expected_revision=_revision(SOURCE.encode()))
    assert source.read_text() == SOURCE + tail
    assert out.text.startswith("edited app.py lines 10-")
    (source.parent / "bare.py").write_text("x = 1")  # no line break at the end: the appended text gets one
    call(EditFileTool, ctx, path="bare.py", old="", new="y = 2\n", expected_revision=_revision(b"x = 1"))
    assert (source.parent / "bare.py").read_text() == "x = 1\ny = 2\n"


def test_an_append_goes_with_other_edits_of_the_same_revision_and_only_one_may_append(
    source: Path, ctx: ToolContext
) -> None:
    revision = _revision(SOURCE.encode())
    edits = [{"old": "", "new": "main()\n"}, {"old": "import os", "new": "import sys"}]
    call(EditFileTool, ctx, path="app.py", edits=edits, expected_revision=revision)
    assert source.read_text() == SOURCE.replace("import os", "import sys") + "main()\n"
    revision = _revision(source.read_bytes())
    with pytest.raises(ToolRejected) as caught:
        prepare(
            EditFileTool,
            ctx,
            path="app.py",
            edits=[{"old": "", "new": "a\n"}, {"old": "", "new": "b\n"}],
            expected_revision=revision,
        )
    assert caught.value.kind == "invalid_arguments" and "only one edit may append" in caught.value.message
    with pytest.raises(ToolRejected) as identical:
        prepare(EditFileTool, ctx, path="app.py", old="", new="", expected_revision=revision)
    assert identical.value.kind == "no_change"


def test_edit_of_binary_file_is_refused(root: Path, ctx: ToolContext):
    data = b"\x00\x01binary"
    (root / "blob.bin").write_bytes(data)
    with pytest.raises(ToolRejected) as caught:
        prepare(EditFileTool, ctx, path="blob.bin", old="binary", new="text", expected_revision=_revision(data))
    assert caught.value.kind == "binary_file"


def test_edit_file_reports_the_lines_of_the_new_text(root: Path, ctx: ToolContext) -> None:
    (root / "span.py").write_text("a\nb\nc\n")
    revision = call(ReadFileTool, ctx, path="span.py").data["revision"]
    grown = call(EditFileTool, ctx, path="span.py", old="b\n", new="x\ny\nz\n", expected_revision=revision)
    assert grown.text.startswith("edited span.py lines 2-4;")
    assert (grown.data["lines_added"], grown.data["lines_removed"]) == (3, 1)
    shrunk = call(
        EditFileTool, ctx, path="span.py", old="x\ny\nz\n", new="q\n", expected_revision=grown.data["source_revision"]
    )
    assert shrunk.text.startswith("edited span.py lines 2-2;")
