"""A full disk under the artifacts folder: the command runs to its end, its tail is kept, and the
result says the artifact file could not be written (never a silent SIGPIPE, exit 141)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protoagent.testing import make_repo

EXE = [sys.executable, "-m", "protoagent"]
NOTE = "[artifact file could not be written: No space left on device; output past byte "


@pytest.fixture
def full_artifacts(tmp_path: Path) -> Iterator[Path]:
    """A data home whose artifacts folder is a 64 KiB tmpfs (root only; skipped elsewhere)."""
    home = tmp_path / "home"
    artifacts = home / "artifacts"
    artifacts.mkdir(parents=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(artifacts)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield home
    finally:
        subprocess.run(["umount", "-l", str(artifacts)], check=False)


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    return subprocess.run([*EXE, *args], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def ended_events(home: Path) -> list[dict[str, Any]]:
    listed = json.loads(cli(home, "sessions", "list", "--json").stdout)
    shown = json.loads(cli(home, "sessions", "show", listed[-1]["session_id"], "--json").stdout)
    return [e for e in shown["events"] if e["type"] == "tool.ended"]


def test_disk_full_in_the_artifacts_folder_keeps_the_command_running_and_its_tail(
    tmp_path: Path, full_artifacts: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "disk full\n"})
    writer = "import sys; sys.stdout.write('x' * 2000000 + '\\n'); print('END-OF-OUTPUT')"
    line = f'!python3 -c "{writer}"; echo "shell went on after the writer: $?"'
    result = cli(full_artifacts, "run", "--repo", str(repo), "--approval", "auto", "--json", line)
    assert result.returncode == 0, result.stderr
    ended = ended_events(full_artifacts)
    assert len(ended) == 1
    payload = ended[0]["payload"]
    output = str(payload["output"])
    print(f"T14 disk full: exit {payload['data']['exit_code']}, last line {output.strip().splitlines()[-1]!r}")
    assert payload["data"]["exit_code"] == 0  # not 141: the writer never saw SIGPIPE
    assert "END-OF-OUTPUT\nshell went on after the writer: 0\n" in output
    assert output.count(NOTE) == 1 and output.rstrip().endswith("bytes]")
    assert "Traceback" not in result.stderr


BIG_TEST = """import sys
import unittest


class BigTest(unittest.TestCase):
    def test_prints_a_lot_and_passes(self):
        sys.stdout.write("y" * 2000000 + "\\n")
"""


def test_disk_full_check_is_classified_from_the_tail_kept_in_memory(tmp_path: Path, full_artifacts: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"test_big.py": BIG_TEST})
    script = tmp_path / "no-turns.jsonl"
    script.write_text("", encoding="utf-8")
    args = ["run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto"]
    result = cli(full_artifacts, *args, "--surface", "verification", "--json", "run the checks")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    print(f"T14 disk full check: {report['checks']}")
    assert [(c["outcome"], c["tests_run"]) for c in report["checks"]] == [("passed", 1)]
    (ended,) = [e for e in ended_events(full_artifacts) if e["payload"]["tool"] == "run_check"]
    assert NOTE in str(ended["payload"]["output"])
