"""Item 7: each command artifact is capped (head and tail kept, the cut marked); a session has a total."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.errors import ConfigError
from protoagent.processes.artifact_cap import ARTIFACT_CAP_ENV, SESSION_CAP_ENV, ArtifactCaps
from protoagent.processes.journal import OutputJournal, create_artifact

WRITER = "import sys\nfor i in range(100000): sys.stdout.write(f'line {i:06d}\\n')"  # 1,200,000 bytes


def _journal_of(folder: Path, stem: str) -> Path:
    path, fd = create_artifact(folder, stem)
    try:
        subprocess.run([sys.executable, "-c", WRITER], stdout=fd, stderr=subprocess.STDOUT, check=True, timeout=120)
    finally:
        os.close(fd)
    OutputJournal(path).consume(1000, settled=True)
    return path


def test_artifact_keeps_head_and_tail_and_marks_the_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ARTIFACT_CAP_ENV, str(128 * 1024))
    path = _journal_of(tmp_path / "s1", "p1")
    text = path.read_text()
    print(f"T8 1.2 MB of output with a 128 KiB cap: artifact {path.stat().st_size} bytes")
    assert text.startswith("line 000000\n")
    assert text.endswith("line 099999\n")
    assert text.count("bytes cut: output passed the 131072-byte artifact cap") == 1
    assert path.stat().st_size < 128 * 1024 + 200


def test_session_total_cap_shrinks_later_artifacts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ARTIFACT_CAP_ENV, str(200 * 1024))
    monkeypatch.setenv(SESSION_CAP_ENV, str(300 * 1024))
    folder = tmp_path / "s2"
    sizes = [_journal_of(folder, f"p{index}").stat().st_size for index in range(3)]
    print(f"T8 session total 300 KiB: artifact sizes {sizes}")
    assert sizes[0] < 200 * 1024 + 200
    assert sizes[1] < 100 * 1024 + 200
    assert sizes[2] < 64 * 1024 + 200
    assert all(Path(folder / f"p{i}.log").read_text().endswith("line 099999\n") for i in range(3))


def test_small_output_is_journalled_whole(tmp_path: Path) -> None:
    path, fd = create_artifact(tmp_path / "s3", "p1")
    try:
        subprocess.run(["printf", "a\\nb\\n"], stdout=fd, check=True, timeout=30)
    finally:
        os.close(fd)
    view = OutputJournal(path).consume(1000, settled=True)
    assert view.text == "a\nb\n" and path.read_text() == "a\nb\n"


def test_a_cap_below_the_minimum_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ARTIFACT_CAP_ENV, "12")
    with pytest.raises(ConfigError, match=ARTIFACT_CAP_ENV):
        ArtifactCaps.from_env()
