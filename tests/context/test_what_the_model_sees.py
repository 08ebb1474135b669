"""What a model receives in a real run: receipts it can act on, stale reads, an append-only task record."""

from __future__ import annotations

import functools
import itertools
from pathlib import Path

from tests.workflow.support import BUGGY, DATE_REPO, FIXED_LINE, call, fix_turns, run_workflow, say, sha

from protoagent.models.types import ModelRequest

OBJECTIVE = "fix the failing date parser test"
NEEDLES = "".join(f"needle_{n:03d} = {'x' * 150!r}\n" for n in range(100))
"""A file whose 100 lines all match ``needle``: one search returns about 17,000 characters."""

run = functools.partial(run_workflow, profile="standard")
"""A standard-profile run (the window given alone would make ``auto`` pick the small profile)."""


def tool_result(request: ModelRequest, call_id: str) -> str:
    return next(m.content for m in request.messages if m.tool_call_id == call_id)


def names(request: ModelRequest) -> set[str]:
    return {t.name for t in request.tools}


def test_a_projected_result_can_be_recalled_by_its_call_id(tmp_path: Path) -> None:
    turns = [
        call("search_regex", "architect", "search_1", pattern="needle", path="."),
        call("read_file", "architect", path="dates.py"),
        call("recall", "architect", "recall_1", call_id="search_1"),
        say("The needles are in needles.py.", "architect"),
    ]
    files = {**DATE_REPO, "needles.py": NEEDLES}
    result = run(tmp_path, "where are the needles?", turns, files=files, window=8000, surface="question")
    requests = result.requests("architect")
    assert "recall" not in names(requests[0]) and "recall" not in names(requests[1])
    receipt = tool_result(requests[2], "search_1")
    assert receipt.startswith("[projected result of search_regex (ok, ")
    assert receipt.endswith('| to see it again: recall(call_id="search_1")]')
    assert "event seq" not in receipt
    assert "recall" in names(requests[2])  # declared once a receipt points to it
    recalled = result.ended("recall")[0].payload
    assert recalled["status"] == "ok"
    search = result.ended("search_regex")[0].payload["output"]
    assert recalled["output"].startswith("recalled search_regex search_1 (ok), chars 0-12000 of ")
    assert search[:12000] in recalled["output"] and "[more: start=12000]" in recalled["output"]


def test_the_small_profile_prompt_lists_recall_only_once_a_receipt_needs_it(tmp_path: Path) -> None:
    turns = [
        call("search_regex", "architect", "search_1", pattern="needle", path="."),
        call("read_file", "architect", path="dates.py"),
        say("The needles are in needles.py.", "architect"),
    ]
    files = {**DATE_REPO, "needles.py": NEEDLES}
    result = run(tmp_path, "where are the needles?", turns, files=files, surface="question", profile="small")
    first, _, last = result.requests("architect")
    assert first.action_mode == "json" and '"name":"read_file"' in first.system
    assert '"name":"recall"' not in first.system
    assert 'to see it again: recall(call_id="search_1")' in tool_result(last, "search_1")
    assert '"name":"recall"' in last.system


def test_an_old_read_is_marked_stale_once_the_coder_edits_the_file(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", "read_1", path="dates.py"),
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        *fix_turns(),
        say("Fixed parse_date.", "architect"),
    ]
    result = run(tmp_path, OBJECTIVE, turns)
    before, after = result.requests("architect")[1:3]
    assert not tool_result(before, "read_1").startswith("[stale")
    fixed = sha(BUGGY.replace("int(day), int(month)", "int(month), int(day)"))
    assert (result.root / "dates.py").read_text().endswith(FIXED_LINE)
    marker = f"[stale: dates.py changed since this read; revision now {fixed[:12]}]\n"
    assert tool_result(after, "read_1") == marker + tool_result(before, "read_1")


def test_task_record_updates_are_appended_and_the_prefix_stays_byte_stable(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", path="test_dates.py"),  # a file the Coder leaves alone: no stale marker
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        *fix_turns(),
        call("list_directory", "architect", path="."),
        say("Fixed parse_date.", "architect"),
    ]
    result = run(tmp_path, OBJECTIVE, turns)
    requests = result.requests("architect")
    assert len(requests) == 4
    for earlier, later in itertools.pairwise(requests):
        assert later.system == earlier.system and later.tools == earlier.tools
        assert later.messages[: len(earlier.messages)] == earlier.messages  # byte-for-byte prefix
    records = [m.content for m in requests[-1].messages if m.content.startswith("[task record]")]
    assert len(records) == 1 and "report from coder" not in records[0]
    update = next(m.content for m in requests[2].messages if m.content.startswith("[task record update]"))
    assert "report from coder: done — swapped month and day back" in update
    assert requests[2].messages[-1].content == update  # appended where the conversation stood


def test_the_current_assignments_reads_stay_exact_over_the_budget(tmp_path: Path) -> None:
    big = "".join(f"# line {n:04d} {'y' * 60}\n" for n in range(240))
    turns = [
        call("coder", "architect", task="add a docstring to dates.py after reading the big module"),
        call("read_file", "coder", "big_1", path="big.py", start_line=1, end_line=110),
        call("read_file", "coder", "big_2", path="big.py", start_line=111, end_line=220),
        call("read_file", "coder", path="dates.py"),
        call("report_task", "coder", status="done", summary="read everything; nothing to change"),
        say("Nothing to change.", "architect"),
    ]
    result = run(tmp_path, OBJECTIVE, turns, files={**DATE_REPO, "big.py": big}, window=8000)
    last = result.requests("coder")[-1]
    exact = {e.payload["call_id"]: e.payload["output"] for e in result.ended("read_file")}
    assert len(exact["big_1"]) + len(exact["big_2"]) > 4 * 4000  # over the 4,000-token history budget
    assert tool_result(last, "big_1") == exact["big_1"]
    assert tool_result(last, "big_2") == exact["big_2"]
