"""Item 4: a catastrophic pattern ends as "pattern timed out", and cancelling stops the search."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import pytest

from protoagent.errors import ToolRejected
from protoagent.tools.base import ToolContext
from protoagent.workspace.paths import DIR_FLAGS
from protoagent.workspace.search import compile_pattern, search_files
from protoagent.workspace.tools import SearchRegexInput, SearchRegexTool

CATASTROPHIC = "(a|aa)+$"
"""Exponential for backtracking matchers, the ``regex`` package included."""
ISSUE_PATTERN = "^(a+)+$"
"""The issue's example: the ``regex`` package optimises it, so it must simply finish."""
VICTIM = "a" * 40 + "b\n"


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "victim.txt").write_text(VICTIM)
    return root


def test_catastrophic_pattern_times_out_with_a_clear_result(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    fd = os.open(root, DIR_FLAGS)
    started = time.monotonic()
    try:
        with pytest.raises(ToolRejected) as caught:
            search_files(fd, compile_pattern(CATASTROPHIC), ".", None, time_limit_s=0.5)
    finally:
        os.close(fd)
    elapsed = time.monotonic() - started
    print(f"T4 catastrophic pattern stopped after {elapsed:.2f} s (limit 0.5 s)")
    assert caught.value.kind == "pattern_timed_out"
    assert "pattern timed out" in caught.value.message and "victim.txt" in caught.value.message
    assert elapsed < 60


def test_cancelling_a_search_stops_it_between_match_attempts(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    for index in range(200):
        (root / f"f{index}.txt").write_text("b" * 10 + "\n")
    cancel = threading.Event()
    cancel.set()
    fd = os.open(root, DIR_FLAGS)
    try:
        with pytest.raises(ToolRejected) as caught:
            search_files(fd, compile_pattern("b"), ".", None, cancel=cancel)
    finally:
        os.close(fd)
    assert caught.value.kind == "cancelled"


def test_ctrl_c_cancels_the_search_tool_and_the_event_loop_stays_responsive(tmp_path: Path) -> None:
    root = _workspace(tmp_path).resolve()
    tool = SearchRegexTool()
    ctx = ToolContext(session_id="s1", call_id="c1", root=root, agent_role="main", profile="standard")

    async def scenario() -> tuple[float, int]:
        prepared = tool.prepare(SearchRegexInput(pattern=CATASTROPHIC, path="."), ctx)
        task = asyncio.create_task(tool.execute(prepared, ctx))
        ticks = 0
        for _ in range(10):
            await asyncio.sleep(0.02)
            ticks += 1
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - started, ticks

    started = time.monotonic()
    waited, ticks = asyncio.run(scenario())
    total = time.monotonic() - started
    print(f"T4 search cancelled in {waited:.2f} s (worker gone after {total:.2f} s); loop ticked {ticks} times")
    assert ticks == 10
    assert waited < 1


def test_ordinary_search_still_finds_matches(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    fd = os.open(root, DIR_FLAGS)
    try:
        found = search_files(fd, compile_pattern(r"a{40}b"), ".", None)
        issue = search_files(fd, compile_pattern(ISSUE_PATTERN), ".", None)
    finally:
        os.close(fd)
    assert [(m.path, m.line) for m in found.matches] == [("victim.txt", 1)]
    assert issue.matches == ()


@pytest.mark.parametrize(
    "pattern",
    ["((a{1000}){1000}){1000}", "(a{1000}){1000}", r"\p{L}(x{1000}){1000}", "(" * 5000 + ")" * 5000, "a" * 5000],
    ids=["nested_counts", "squared_count", "regex_only_syntax", "deep_groups", "long"],
)
def test_compile_bombs_are_rejected_before_compiling(pattern: str) -> None:
    started = time.monotonic()
    with pytest.raises(ToolRejected) as caught:
        compile_pattern(pattern)
    assert caught.value.kind == "invalid_regex" and len(caught.value.message) < 600
    assert time.monotonic() - started < 5
