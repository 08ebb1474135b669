"""edit_file with several {old, new} pairs: one revision, all or none, one diff, one receipt."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path
from typing import Any

import pytest
from ws_helpers import call, prepare

from protoagent.errors import ToolRejected
from protoagent.tools.base import ToolContext
from protoagent.workspace.tools import EditFileTool

FILLER = "".join(f"# filler {n}\n" for n in range(30))
SOURCE = f"A = 1\n{FILLER}def b():\n    return 2\n{FILLER}C = 3\n"


def _revision(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def source(root: Path) -> Path:
    path = root / "mod.py"
    path.write_text(SOURCE)
    return path


def _edits(*pairs: tuple[str, str]) -> list[dict[str, str]]:
    return [{"old": old, "new": new} for old, new in pairs]


AFTER = SOURCE.replace("A = 1\n", "A = 10\n").replace("return 2", "return 20").replace("C = 3\n", "C = 30\nD = 4\n")
THREE = _edits(("A = 1\n", "A = 10\n"), ("    return 2\n", "    return 20\n"), ("C = 3\n", "C = 30\nD = 4\n"))


def _rejected(ctx: ToolContext, **args: Any) -> ToolRejected:
    with pytest.raises(ToolRejected) as caught:
        prepare(EditFileTool, ctx, path="mod.py", expected_revision=_revision(SOURCE.encode()), **args)
    return caught.value


def test_three_spans_apply_in_one_call_with_one_receipt(source: Path, ctx: ToolContext) -> None:
    out = call(EditFileTool, ctx, path="mod.py", edits=THREE, expected_revision=_revision(SOURCE.encode()))
    expected = (
        SOURCE.replace("A = 1\n", "A = 10\n").replace("return 2", "return 20").replace("C = 3\n", "C = 30\nD = 4\n")
    )
    assert source.read_text() == expected
    assert out.data["source_revision"] == _revision(expected.encode())
    assert (out.data["lines_added"], out.data["lines_removed"]) == (4, 3)
    assert out.text.startswith("edited mod.py lines 1-1, 33-33, 64-65;")


def test_one_diff_covers_every_span_and_applies_to_the_old_file(root: Path, source: Path, ctx: ToolContext) -> None:
    prepared = prepare(EditFileTool, ctx, path="mod.py", edits=THREE, expected_revision=_revision(SOURCE.encode()))
    diff = prepared.preview
    assert diff.count("--- a/mod.py") == 1 and diff.count("@@ -") == 3
    # The hunks' line numbers are right: git applies the preview to the untouched file.
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "apply", "-"], cwd=root, input=diff, text=True, check=True)
    assert source.read_text() == AFTER


def test_nearby_spans_share_one_hunk(source: Path, ctx: ToolContext) -> None:
    pairs = _edits(("def b():\n", "def bee():\n"), ("    return 2\n", "    return 22\n"))
    prepared = prepare(EditFileTool, ctx, path="mod.py", edits=pairs, expected_revision=_revision(SOURCE.encode()))
    assert prepared.preview.count("@@ -") == 1


def test_the_order_of_the_pairs_does_not_change_the_result(root: Path, source: Path, ctx: ToolContext) -> None:
    call(EditFileTool, ctx, path="mod.py", edits=list(reversed(THREE)), expected_revision=_revision(SOURCE.encode()))
    reversed_result = source.read_text()
    source.write_text(SOURCE)
    call(EditFileTool, ctx, path="mod.py", edits=THREE, expected_revision=_revision(SOURCE.encode()))
    assert source.read_text() == reversed_result


def test_one_missing_span_changes_nothing_and_names_the_pair(source: Path, ctx: ToolContext) -> None:
    rejected = _rejected(ctx, edits=_edits(("A = 1\n", "A = 10\n"), ("E = 5\n", "E = 50\n")))
    assert rejected.kind == "no_match" and rejected.message.startswith("edits[1]: old text was not found")
    assert rejected.details["edit"] == 1
    assert source.read_text() == SOURCE


def test_overlapping_pairs_are_a_no_change_rejection(source: Path, ctx: ToolContext) -> None:
    rejected = _rejected(ctx, edits=_edits(("def b():\n    return 2\n", "x\n"), ("    return 2\n", "    return 3\n")))
    assert rejected.kind == "overlapping_edits" and rejected.details["edits"] == [0, 1]
    assert source.read_text() == SOURCE


def test_the_same_span_twice_is_refused_as_overlap(source: Path, ctx: ToolContext) -> None:
    rejected = _rejected(ctx, edits=_edits(("C = 3\n", "C = 30\n"), ("C = 3\n", "C = 31\n")))
    assert rejected.kind == "overlapping_edits"
    assert source.read_text() == SOURCE


def test_an_ambiguous_pair_names_its_index(source: Path, ctx: ToolContext) -> None:
    rejected = _rejected(ctx, edits=_edits(("A = 1\n", "A = 10\n"), ("# filler 3\n", "# three\n")))
    assert rejected.kind == "ambiguous_match" and rejected.message.startswith("edits[1]: old text occurs more")
    assert source.read_text() == SOURCE


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        ({"old": "A = 1\n", "new": "A = 2\n", "edits": _edits(("C = 3\n", "C = 4\n"))}, "invalid_arguments"),
        ({"old": "A = 1\n"}, "invalid_arguments"),
        ({}, "invalid_arguments"),
        ({"edits": []}, "invalid_arguments"),
        ({"edits": _edits(("A = 1\n", "A = 2\n"), ("C = 3\n", "C = 3\n"))}, "no_change"),
        ({"edits": _edits(("", "x\n"), ("A = 1\n", "A = 2\n"), ("", "y\n"))}, "invalid_arguments"),
    ],
)
def test_malformed_calls_get_a_correctable_rejection(
    source: Path, ctx: ToolContext, args: dict[str, Any], kind: str
) -> None:
    assert _rejected(ctx, **args).kind == kind
    assert source.read_text() == SOURCE


def test_a_stale_revision_refuses_every_pair(source: Path, ctx: ToolContext) -> None:
    with pytest.raises(ToolRejected) as caught:
        prepare(EditFileTool, ctx, path="mod.py", edits=THREE, expected_revision=_revision(b"older"))
    assert caught.value.kind == "stale_revision"
    assert source.read_text() == SOURCE


def test_crlf_and_numbered_copies_work_in_every_pair(root: Path, ctx: ToolContext) -> None:
    path = root / "win.txt"
    data = b"one\r\ntwo\r\nthree\r\nfour\r\n"
    path.write_bytes(data)
    pairs = _edits(("   1| one\n", "   1| ONE\n"), ("four\n", "FOUR\nfive\n"))
    call(EditFileTool, ctx, path="win.txt", edits=pairs, expected_revision=_revision(data))
    assert path.read_bytes() == b"ONE\r\ntwo\r\nthree\r\nFOUR\r\nfive\r\n"


def test_mixed_line_endings_outside_the_spans_are_kept(root: Path, ctx: ToolContext) -> None:
    path = root / "mixed.txt"
    data = b"a\r\nb\nc\r\nd\n"
    path.write_bytes(data)
    call(EditFileTool, ctx, path="mixed.txt", edits=_edits(("a", "A"), ("d", "D")), expected_revision=_revision(data))
    assert path.read_bytes() == b"A\r\nb\nc\r\nD\n"


def test_the_schema_offers_edits_without_definitions() -> None:
    schema = EditFileTool().schema().parameters
    assert "$defs" not in schema and schema["required"] == ["path", "expected_revision"]
    assert schema["properties"]["edits"]["items"]["required"] == ["old", "new"]
