"""Replacing one of ProtoAgent's own files: readers see the old file or the new one, the new file
is private, and a write that fails leaves the old file and no temporary file behind."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from protoagent.atomic_files import replace_file


def test_a_replaced_file_is_whole_private_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "settings.json"
    target.write_text("old\n")
    replace_file(target, "new\n", durable=True)
    assert target.read_text() == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["settings.json"]


def test_a_write_that_fails_keeps_the_old_file_and_removes_its_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "trust.json"
    target.write_text("old\n")
    with pytest.raises(UnicodeEncodeError):
        replace_file(target, "half \udcff written", prefix=".trust.")  # a lone surrogate cannot be UTF-8
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["trust.json"]
