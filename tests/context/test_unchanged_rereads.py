"""A re-read of an unchanged range gets a receipt naming the earlier call, not the same text again.

Two ``read_file`` calls on the same unchanged range once returned the full text twice. Spec
(application-harness): revision-aware tools return a receipt instead of rereading an unchanged
source range.
"""

from __future__ import annotations

import functools
from pathlib import Path

from tests.workflow.support import BUGGY, BUGGY_LINE, FIXED_LINE, call, run_workflow, say, sha

from protoagent.context.projection import ProjectionSettings
from protoagent.hooks.projection import ToolContextProjectionHook
from protoagent.models.types import ModelRequest

from .support import METADATA, Conversation, big, tool_contents

run = functools.partial(run_workflow, profile="standard", surface="question")
REVISION = sha(BUGGY)
RECEIPT = (
    f"[unchanged since call read_1: dates.py lines 1-6 at revision {REVISION[:12]}; "
    'the text is in that call\'s result above | if it is no longer there: recall(call_id="read_2")]'
)


def shown(request: ModelRequest, call_id: str) -> str:
    return tool_contents(request)[call_id]


def names(request: ModelRequest) -> set[str]:
    return {t.name for t in request.tools}


def test_a_second_read_of_the_same_unchanged_range_is_a_receipt(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", "read_1", path="dates.py"),
        call("read_file", "architect", "read_2", path="dates.py"),
        call("recall", "architect", "recall_1", call_id="read_2"),
        say("parse_date swaps month and day.", "architect"),
    ]
    result = run(tmp_path, "what does parse_date return?", turns)
    requests = result.requests("architect")
    first = result.ended("read_file")[0].payload["output"]
    assert shown(requests[2], "read_1") == first and "def parse_date(text):" in first
    assert shown(requests[2], "read_2") == RECEIPT
    assert "recall" in names(requests[2])
    assert shown(requests[3], "read_2") == RECEIPT  # kept: the prefix never changes back
    # The log keeps the full text, and recall of the re-read returns it.
    assert result.ended("read_file")[1].payload["output"] == first
    assert "def parse_date(text):" in result.ended("recall")[0].payload["output"]


def test_a_sub_range_of_an_earlier_read_is_a_receipt_and_a_wider_one_is_text(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", "read_1", path="dates.py", start_line=1, end_line=5),
        call("read_file", "architect", "read_2", path="dates.py", start_line=4, end_line=5),
        call("read_file", "architect", "read_3", path="dates.py", start_line=3, end_line=6),
        say("parse_date swaps month and day.", "architect"),
    ]
    last = run(tmp_path, "what does parse_date return?", turns).requests("architect")[-1]
    assert shown(last, "read_2").startswith("[unchanged since call read_1: dates.py lines 4-5 at revision ")
    assert "return int(year), int(day), int(month)" in shown(last, "read_3")


def test_a_read_after_the_file_changed_returns_the_text(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", "read_1", path="dates.py"),
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=REVISION),
        call("report_task", "coder", status="done", summary="swapped month and day back"),
        call("read_file", "architect", "read_2", path="dates.py"),
        say("Fixed parse_date.", "architect"),
    ]
    result = run_workflow(tmp_path, "fix the failing date parser test", turns)
    last = result.requests("architect")[-1]
    assert shown(last, "read_1").startswith("[stale: dates.py changed since this read")
    assert FIXED_LINE.strip() in shown(last, "read_2") and "unchanged since" not in shown(last, "read_2")


REV = "d" * 64
TIGHT = ProjectionSettings(budget_tokens=1500)


def _reads(chat: Conversation, count: int) -> list[str]:
    return [chat.read("big.py", big("big.py"), REV, 1, 60) for _ in range(count)]


def test_a_re_read_of_a_projected_result_says_so_and_names_the_recall() -> None:
    chat = Conversation()
    chat.user("task")
    chat.turn()
    first = _reads(chat, 1)[0]
    chat.batch(("search_regex", big("s1")))
    chat.batch(("search_regex", big("s2")))
    chat.turn()
    hook = ToolContextProjectionHook(METADATA, TIGHT)
    assert "[projected result of read_file" in shown(hook(chat.request(), chat.events), first)
    again = _reads(chat, 1)[0]
    shaped = hook(chat.request(), chat.events)
    # The earlier result was projected before this read: the text is shown, as its receipt promised.
    assert shown(shaped, again) == big("big.py")


def test_a_receipt_follows_its_source_when_that_is_projected_later() -> None:
    chat = Conversation()
    chat.user("task")
    chat.turn()
    first, again = _reads(chat, 2)
    hook = ToolContextProjectionHook(METADATA, TIGHT)
    before = hook(chat.request(), chat.events)
    assert shown(before, again).endswith(
        f'the text is in that call\'s result above | if it is no longer there: recall(call_id="{again}")]'
    )
    chat.turn()
    chat.batch(("search_regex", big("s1")))
    chat.batch(("search_regex", big("s2")))
    after = hook(chat.request(), chat.events)
    assert "[projected result of read_file" in shown(after, first)
    assert shown(after, again) == (
        f"[unchanged since call {first}: big.py lines 1-60 at revision {REV[:12]}; "
        f'that call\'s result was projected since | to see it again: recall(call_id="{again}")]'
    )
    assert "recall" in names(after)


def test_without_recall_a_re_read_is_shown_whole() -> None:
    chat = Conversation()
    chat.user("task")
    _, again = _reads(chat, 2)
    shaped = ToolContextProjectionHook(METADATA)(chat.request(recall=False), chat.events)
    assert shown(shaped, again) == big("big.py")


def test_a_read_that_cut_a_long_line_never_stands_for_a_re_read() -> None:
    chat = Conversation()
    chat.user("task")
    data = {"path": "one.py", "revision": REV, "start_line": 1, "end_line": 1, "truncated_long_line": True}
    chat.batch(("read_file", "1| xxxx\n[line 1 truncated]"), data=data)
    again = chat.batch(("read_file", "1| xxxx\n[line 1 truncated]"), data=data)[0]
    shaped = ToolContextProjectionHook(METADATA)(chat.request(), chat.events)
    assert shown(shaped, again) == "1| xxxx\n[line 1 truncated]"
