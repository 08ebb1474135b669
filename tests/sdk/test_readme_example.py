"""The README's SDK examples, run as written (only the model is swapped for a scripted one that
fixes a failing test): each ends verified."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.testing import final_turn, make_repo, write_script

README = Path(__file__).resolve().parents[2] / "README.md"
BUGGY = "def parse_date(text):\n    year, month, day = text.split('-')\n    return int(year), int(day), int(month)\n"
TESTS = (
    "import unittest\n\nfrom dates import parse_date\n\n\nclass T(unittest.TestCase):\n"
    "    def test_parse(self):\n        self.assertEqual(parse_date('2024-03-15'), (2024, 3, 15))\n"
)


def sdk_examples() -> list[str]:
    """The Python blocks of the README's "Python SDK" section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Python SDK", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def fixing_script(path: Path) -> Path:
    edit = {
        "path": "dates.py",
        "old": "int(day), int(month)",
        "new": "int(month), int(day)",
        "expected_revision": hashlib.sha256(BUGGY.encode()).hexdigest(),
    }
    done = {"status": "done", "summary": "swapped month and day back"}
    return write_script(
        path,
        [
            {"role": "architect", "tool_calls": [{"name": "coder", "arguments": {"task": "fix dates.py"}}]},
            {"role": "coder", "tool_calls": [{"name": "edit_file", "arguments": edit}]},
            {"role": "coder", "tool_calls": [{"name": "report_task", "arguments": done}]},
            final_turn("fixed", role="coder"),
            final_turn("Fixed parse_date.", role="architect"),
        ],
    )


def test_the_readme_has_an_async_and_a_sync_sdk_example() -> None:
    examples = sdk_examples()
    assert len(examples) == 2
    assert "stream_run" in examples[0] and "run_sync" in examples[1]
    assert all('model="local"' in example for example in examples)


@pytest.mark.parametrize("which", [0, 1], ids=["stream_run", "run_sync"])
def test_the_readme_sdk_example_ends_verified(tmp_path: Path, which: int) -> None:
    repo = make_repo(tmp_path / "repo", {"dates.py": BUGGY, "test_dates.py": TESTS})
    script = fixing_script(tmp_path / "turns.jsonl")
    code = sdk_examples()[which].replace('model="local"', f"model={f'scripted:{script}'!r}")
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.startswith("completed True"), result.stdout[-2000:]
    assert "int(month), int(day)" in (repo / "dates.py").read_text()
