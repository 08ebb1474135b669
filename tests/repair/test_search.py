"""The search over every ranked line and over pairs of lines, in whole runs on the small profile:
the scripted model stands where the model stands and proposes, the checks decide."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from protoagent.events import Event, MemoryStore
from protoagent.repair.candidates import REPAIR_AGENT, CandidateEdit
from protoagent.repair.search import no_op
from protoagent.testing import ScriptedModel
from protoagent.workflow.run import RunOptions, RunReport, run_task

from .support import repo

BOUNDS = '''"""Bounds of a list."""


def bounds(values):
    """The smallest and the largest value."""
    ordered = sorted(values)
    low = ordered[-1]
    high = ordered[0]
    return low, high
'''
BOUNDS_TEST = "from bounds import bounds\n\n\ndef test_bounds():\n    assert bounds([3, 1, 2]) == (1, 3)\n"
LOW, HIGH = "    low = ordered[-1]", "    high = ordered[0]"
LOW_FIXED, HIGH_FIXED = "    low = ordered[0]", "    high = ordered[-1]"


@pytest.fixture(autouse=True)
def model_candidates_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These runs pin the search over the model's candidates: the operator phase would fix the bugs first."""
    monkeypatch.setenv("PROTOAGENT_REPAIR_OPERATORS", "off")


def candidate(path: str, old: str, new: str) -> dict[str, Any]:
    return {"role": REPAIR_AGENT, "text": json.dumps({"path": path, "old": old, "new": new})}


def run(tmp_path: Path, files: Mapping[str, str], turns: Sequence[dict[str, Any]]) -> tuple[RunReport, list[Event]]:
    root = repo(tmp_path, files, git=True)
    store = MemoryStore()
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=store,
        approval="auto",
        surface="editing",
        provider=ScriptedModel.from_lines([*turns, {"role": "architect", "text": "not fixed"}]),
        profile="small",
        tester=False,
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    report = asyncio.run(run_task("fix the failing test", options))
    return report, store.load(report.session_id)


def tried(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [e.payload for e in events if e.type == "repair.candidate"]


def test_two_swapped_assignments_are_fixed_as_a_pair_of_candidates_that_each_moved_the_failure(
    tmp_path: Path,
) -> None:
    files = {"bounds.py": BOUNDS, "test_bounds.py": BOUNDS_TEST}
    turns = [candidate("bounds.py", LOW, LOW_FIXED), candidate("bounds.py", HIGH, HIGH_FIXED)]
    report, events = run(tmp_path, files, turns)
    runs = tried(events)
    assert [(r["line"], len(r["also"]), r["passed"]) for r in runs] == [(7, 0, False), (8, 0, False), (7, 1, True)]
    assert runs[-1]["also"][0]["new"] == HIGH_FIXED
    [edit] = [e for e in events if e.type == "tool.ended" and e.payload["tool"] == "edit_file"]
    assert (edit.agent, edit.payload["status"]) == ("coder", "ok")
    fixed = BOUNDS.replace(LOW, LOW_FIXED).replace(HIGH, HIGH_FIXED)
    assert (tmp_path / "repo" / "bounds.py").read_text() == fixed
    assert report.evidence.verified
    assert any("line 7 -> 'low = ordered[0]' and line 8 -> 'high = ordered[-1]'" in n for n in report.notes)


def test_a_pair_never_includes_a_candidate_that_hard_codes_the_expected_value(tmp_path: Path) -> None:
    files = {"bounds.py": BOUNDS, "test_bounds.py": BOUNDS_TEST}
    turns = [
        candidate("bounds.py", "    return low, high", "return 1, 3"),
        candidate("bounds.py", LOW, LOW_FIXED),
        candidate("bounds.py", "    return low, high", "return low, low"),
    ]
    report, events = run(tmp_path, files, turns)
    runs = tried(events)
    assert [(r["line"], len(r["also"])) for r in runs] == [(7, 0), (9, 0), (7, 1)]  # the pair of the two that ran
    assert all("1, 3" not in r["new"] for r in runs)
    assert all("1, 3" not in a["new"] for r in runs for a in r["also"])
    assert not any(r["passed"] for r in runs)
    assert (tmp_path / "repo" / "bounds.py").read_text() == BOUNDS
    assert not report.evidence.applied


SCALE = '''"""Readable sizes."""

UNITS = ("B", "kB", "MB")


def readable(size):
    """A size in bytes as text with a decimal unit."""
    if size < 0:
        raise ValueError("negative size")
    index = 0
    value = float(size)
    while value >= 1024 and index < len(UNITS) - 1:
        value /= 1000
        index += 1
    text = f"{value:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    unit = UNITS[index]
    label = f"{text} {unit}"
    return label
'''
SCALE_TEST = "from scale import readable\n\n\ndef test_readable():\n    assert readable(1000) == '1 kB'\n"


def test_every_line_of_the_function_is_offered_not_only_the_lines_near_the_return(tmp_path: Path) -> None:
    # The wrong constant is the loop's condition, eight lines above the return.
    files = {"scale.py": SCALE, "test_scale.py": SCALE_TEST}
    old = "    while value >= 1024 and index < len(UNITS) - 1:"
    report, events = run(
        tmp_path, files, [candidate("scale.py", old, "while value >= 1000 and index < len(UNITS) - 1:")]
    )
    [started] = [e.payload for e in events if e.type == "repair.started"]
    offered = started["functions"][0]["lines"]
    assert offered.index(12) > 0 and sorted(offered) == list(range(8, 21))  # every body line but the docstring
    assert offered[0] == 20  # the return first
    assert [r["passed"] for r in tried(events)] == [True]
    assert report.evidence.verified


def test_a_line_cut_down_to_a_no_op_is_never_run() -> None:
    def edit(old: str, new: str) -> CandidateEdit:
        return CandidateEdit("m.py", 3, old, new)

    assert no_op(edit("    return total / count", "    return"))
    assert no_op(edit("    ext = 'th'", "    ext"))
    assert not no_op(edit("    return total / count", "    return total / len(values)"))
    assert not no_op(edit("    if upper > lower:", "    if upper < lower:"))
    assert not no_op(edit("    values.sort()", "    values.reverse()"))
