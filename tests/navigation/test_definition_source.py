"""A definition answer of a few results carries their source lines as read_file shows them, with
the file's full revision, so the model can edit without another read; a long body is cut with a
marker that counts exactly the lines left out."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from protoagent.testing import final_turn, tool_turn, write_script

from .support import shop_repo

EXE = [sys.executable, "-m", "protoagent"]
LONG = "def long_one(x):\n" + "".join(f"    x = x + {n}  # step {n}\n" for n in range(90)) + "    return x\n"
DOCUMENTED = (
    'def documented():\n    """Say it.\n\n'
    + "".join(f"    Line {n} of the docstring.\n" for n in range(50))
    + '    """\n    return 42\n'
)
"""55 lines: a definition this short is shown whole, its body below a docstring longer than 40 lines."""


def _code_context_outputs(
    tmp_path: Path, *calls: dict[str, str], extra: dict[str, str] | None = None
) -> tuple[Path, list[str]]:
    root = shop_repo(tmp_path, {"steps.py": "import os\n\n\n" + LONG, **(extra or {})})
    turns = [tool_turn("code_context", role="architect", **call) for call in calls]
    script = write_script(tmp_path / "turns.jsonl", [*turns, final_turn("done.", role="architect")])
    home = tmp_path / "home"
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*EXE, *args], env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )

    run = cli("run", "--model", f"scripted:{script}", "--repo", str(root), "--json", "what does long_one do?")
    assert run.returncode == 0, run.stderr
    shown = cli("sessions", "show", json.loads(run.stdout)["session_id"], "--json")
    assert shown.returncode == 0, shown.stderr
    events: list[dict[str, Any]] = json.loads(shown.stdout)["events"]
    ended = [e["payload"] for e in events if e["type"] == "tool.ended" and e["payload"]["tool"] == "code_context"]
    assert [e["status"] for e in ended] == ["ok"] * len(calls)
    return root, [str(e["output"]) for e in ended]


def test_a_long_definition_shows_its_first_40_lines_with_the_full_revision_and_counts_the_rest(
    tmp_path: Path,
) -> None:
    root, (output,) = _code_context_outputs(tmp_path, {"symbol": "long_one", "operation": "definition"})
    revision = hashlib.sha256((root / "steps.py").read_bytes()).hexdigest()
    assert "steps.py:4-95 function steps.long_one" in output
    assert f"steps.py lines 4-43 of 95; revision {revision}\n" in output
    assert "   4| def long_one(x):\n" in output and "  43|     x = x + 38  # step 38\n" in output
    assert "step 39" not in output and "return x" not in output
    assert output.endswith("[... 52 more lines of steps.long_one not shown (to line 95): read_file start_line=44 ...]")


def test_a_short_definition_is_shown_whole_and_several_matches_each_show_theirs(tmp_path: Path) -> None:
    root, (price, send, documented) = _code_context_outputs(
        tmp_path,
        {"symbol": "price", "operation": "definition"},
        {"symbol": "send", "operation": "definition"},
        {"symbol": "documented", "operation": "definition"},
        extra={"doc.py": DOCUMENTED},
    )
    assert "doc.py lines 1-55 of 55" in documented and "  55|     return 42" in documented
    assert "more line" not in documented
    util = hashlib.sha256((root / "shop/util.py").read_bytes()).hexdigest()
    assert (
        f"shop/util.py lines 4-5 of 9; revision {util}\n   4| def price(amount):\n   5|     return round(amount, 2)"
        in price
    )
    assert "more line" not in price
    for path in ("shop/base.py", "shop/client.py"):
        revision = hashlib.sha256((root / path).read_bytes()).hexdigest()
        assert f"{path} lines" in send and f"revision {revision}\n" in send
    assert send.count("def send(self, data):") == 2


def test_a_definition_answer_of_many_results_stays_a_list_of_locations(tmp_path: Path) -> None:
    many = {f"pkg{n}/mod.py": "def run():\n    return 1\n" for n in range(5)}
    _, (output,) = _code_context_outputs(tmp_path, {"symbol": "run", "operation": "definition"}, extra=many)
    assert output.count(" function ") == 5 and "revision " not in output and "| " not in output
