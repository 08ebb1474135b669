"""Worker assignments and windows: each assignment starts from its packet, carries what the
Architect already read, knows its window, and several calls may share one turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from protoagent.errors import ToolRejected
from protoagent.models.types import ModelRequest
from protoagent.workflow import roles
from protoagent.workflow.packets import SPAN_BUDGETS
from protoagent.workspace.edits import replace_exactly_once

from .support import BUGGY, BUGGY_LINE, FIXED_LINE, call, fix_turns, run_workflow, say, sha

OBJECTIVE = "fix the failing date parser test"
NUMBERED_BUGGY_LINE = "   6| " + BUGGY_LINE
NUMBERED_FIXED_LINE = "   6| " + FIXED_LINE


def _text(request: ModelRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def _requests(run_requests: list[ModelRequest], agent: str) -> list[ModelRequest]:
    return [r for r in run_requests if r.agent_role == agent]


def _packet(request: ModelRequest) -> str:
    """The context a Coder assignment starts from (its window line is always there)."""
    return next(m.content for m in request.messages if "This work window has" in m.content)


def _batch(role: str, *calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    """One model turn carrying several tool calls, run in order."""
    return {"role": role, "tool_calls": [{"name": name, "arguments": args} for name, args in calls]}


def _alternating_reads(count: int) -> list[dict[str, Any]]:
    """Distinct Coder reads that make no edit (never the same call twice in a row)."""
    paths = ("dates.py", "test_dates.py")
    return [call("read_file", "coder", path=paths[i % 2]) for i in range(count)]


def test_a_second_coder_assignment_starts_fresh_from_its_packet(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="first: fix the swapped month/day in dates.py"),
        *fix_turns(),
        call("coder", "architect", task="second: add a module docstring note"),
        call("report_task", "coder", status="done", summary="nothing more to change"),
        say("Fixed parse_date.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    coder = _requests(run.model.requests, "coder")
    first, second = coder[0], coder[3]  # read, edit and report of the first; the second's first request
    assert first.messages[0].content.startswith("Assignment: first")
    second_text = _text(second)
    assert second.messages[0].content == "Assignment: second: add a module docstring note"
    assert "first: fix the swapped" not in second_text
    assert "report recorded" not in second_text and "def parse_date" not in second_text
    assert not any(m.role in ("assistant", "tool") for m in second.messages)


def test_coder_assignment_carries_the_spans_the_architect_read(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", path="dates.py"),
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        # Coder edits straight from the packet, old text copied with its line number.
        call(
            "edit_file",
            "coder",
            path="dates.py",
            old=NUMBERED_BUGGY_LINE,
            new=NUMBERED_FIXED_LINE,
            expected_revision=sha(BUGGY),
        ),
        call("report_task", "coder", status="done", summary="swapped month and day back"),
        say("Fixed parse_date.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    packet = _packet(_requests(run.model.requests, "coder")[0])
    assert f"--- dates.py lines 1-6 of 6; revision {sha(BUGGY)}" in packet
    assert NUMBERED_BUGGY_LINE in packet
    assert (run.root / "dates.py").read_text().endswith(FIXED_LINE)
    assert [e.agent for e in run.ended("read_file")] == ["architect"]  # Coder never re-read
    assert run.json["status"] == "completed" and run.json["verified"] is True


SPAN_LINE_BUDGET = SPAN_BUDGETS["standard"].lines


def test_carried_spans_are_bounded_most_recent_first(tmp_path: Path) -> None:
    big = "".join(f"value_{i} = {i}\n" for i in range(1, 301))
    turns = [
        call("read_file", "architect", path="big.py"),
        call("read_file", "architect", path="dates.py"),
        call("coder", "architect", task="fix dates.py using the values of big.py"),
        call("report_task", "coder", status="blocked", summary="stop here"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files={"dates.py": BUGGY, "big.py": big})
    packet = _packet(_requests(run.model.requests, "coder")[0])
    headers = [line for line in packet.splitlines() if line.startswith("--- ")]
    assert headers[0].startswith("--- dates.py lines 1-6 of 6")  # the most recent read first
    assert headers[1].startswith(f"--- big.py lines 1-{SPAN_LINE_BUDGET - 6} of 300")
    numbered = [line for line in packet.splitlines() if "| " in line and line.split("|")[0].strip().isdigit()]
    assert len(numbered) == SPAN_LINE_BUDGET


def test_a_span_whose_file_changed_since_is_left_out(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", path="dates.py"),
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY)),
        call("report_task", "coder", status="done", summary="swapped month and day back"),
        call("coder", "architect", task="tidy the docstring"),
        call("report_task", "coder", status="done", summary="nothing to tidy"),
        say("Fixed.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    second = _requests(run.model.requests, "coder")[2]
    assert second.messages[0].content == "Assignment: tidy the docstring"
    packet = _packet(second)
    assert "--- dates.py" not in packet and NUMBERED_BUGGY_LINE not in packet
    assert "Left out because the file changed since it was read: dates.py" in packet


def test_coder_is_told_its_window_size(tmp_path: Path) -> None:
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("Fixed.", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    first = _requests(run.model.requests, "coder")[0]
    window = roles.coder("standard", "native").max_steps
    assert f"This work window has {window} model turns." in _text(first)


def test_a_window_that_ends_right_after_an_applied_edit_reports_done_with_edits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_CODER_MAX_WINDOWS", "1")
    window = roles.coder("standard", "native").max_steps
    edit = call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY))
    turns = [
        call("coder", "architect", task="fix dates.py"),
        *_alternating_reads(window - 1),
        edit,  # the window's last turn applies the fix
        say("Fixed parse_date.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    result = run.ended("coder")[0].payload["data"]
    assert (result["status"], result["reason"]) == ("done", "window_ended_after_edit")
    assert result["changed_files"] == ["dates.py"]
    assert not run.of("workflow.work_yielded")
    assert run.json["status"] == "completed" and run.json["verified"] is True


def test_plain_text_after_a_window_limit_resolves_the_turn_limit_handoff(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_CODER_MAX_WINDOWS", "1")
    window = roles.coder("standard", "native").max_steps
    edit = call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY))
    turns = [
        call("coder", "architect", task="fix dates.py"),
        edit,
        *_alternating_reads(window - 1),  # the window ends on a read: unfinished
        call("coder", "architect", task="finish the fix in dates.py"),
        say("The fix is already in place; nothing left to change.", "coder"),
        say("Fixed parse_date.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    first, second = (e.payload["data"] for e in run.ended("coder"))
    assert (first["status"], first["reason"]) == ("needs_context", "worker_turn_limit")
    assert (second["status"], second["reason"]) == ("done", "")
    assert len(run.of("workflow.continuing")) == 1
    assert run.json["status"] == "completed", run.json
    assert run.json["verified"] is True and run.json["criteria_supported"] is True


def test_calls_of_one_turn_run_in_order_coder_then_verify(tmp_path: Path) -> None:
    turns = [
        _batch(
            "architect",
            ("coder", {"task": "fix the swapped month/day in dates.py"}),
            ("run_check", {"check_id": "unittest", "phase": "verify"}),
        ),
        _batch(
            "coder",
            ("edit_file", {"path": "dates.py", "old": BUGGY_LINE, "new": FIXED_LINE, "expected_revision": sha(BUGGY)}),
            ("report_task", {"status": "done", "summary": "swapped month and day back"}),
        ),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    edit = run.ended("edit_file")[0]
    verify = [e for e in run.ended("run_check") if e.payload["data"].get("phase") == "verify"]
    assert len(verify) == 1 and verify[0].agent == "architect"  # the graph had nothing left to verify
    assert verify[0].seq > edit.seq and verify[0].payload["status"] == "ok"
    # The passing verify closed the phase: no closing-summary request to the Architect.
    assert [r.agent_role for r in run.model.requests] == ["architect", "coder"]
    assert run.json["status"] == "completed" and run.json["verified"] is True


def test_a_denial_stops_the_rest_of_the_batch(tmp_path: Path) -> None:
    turns = [
        call("plan_task", "architect", paths=["dates.py"]),
        call("coder", "architect", task="fix dates.py"),
        _batch(
            "coder",
            ("create_file", {"path": "notes.md", "content": "outside the planned scope\n"}),
            ("edit_file", {"path": "dates.py", "old": BUGGY_LINE, "new": FIXED_LINE, "expected_revision": sha(BUGGY)}),
        ),
        call("report_task", "coder", status="blocked", summary="the note was denied"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert run.ended("create_file")[0].payload["status"] == "denied"
    skipped = run.ended("edit_file")[0].payload
    assert (skipped["status"], skipped["data"]["kind"]) == ("rejected", "batch_stopped")
    assert skipped["output"].startswith("not run: create_file")
    assert (run.root / "dates.py").read_text() == BUGGY
    assert not (run.root / "notes.md").exists()


def test_prompts_say_several_calls_may_share_a_turn_on_the_standard_profile(tmp_path: Path) -> None:
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("Fixed.", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    architect = _requests(run.model.requests, "architect")[0].system
    coder = _requests(run.model.requests, "coder")[0].system
    assert "Calls in one turn run in order (coder, then run_check)" in architect
    assert "A passing verify of all selected checks ends the run" in architect
    assert "Calls in one turn run in order" in coder and "edit_file then report_task" in coder
    # A small model's JSON action is one call: its prompts do not offer batching.
    assert roles.BATCHING["architect"] not in roles.architect("small", "json").system_prompt
    assert roles.BATCHING["coder"] not in roles.coder("small", "json").system_prompt


def test_the_planned_baseline_costs_no_model_request(tmp_path: Path) -> None:
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("Fixed.", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    baseline = [e for e in run.ended("run_check") if e.payload["data"].get("phase") == "baseline"]
    first_request = run.of("model.requested")[0]
    assert baseline and all(e.seq < first_request.seq for e in baseline)
    assert first_request.agent == "architect"
    assert len(run.of("model.requested")) == len(turns)  # one request per scripted turn, none for the plan


def test_coder_reads_numbered_lines_like_the_architect(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", path="dates.py"),
        call("coder", "architect", task="fix dates.py"),
        *fix_turns(),
        say("Fixed.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    architect, coder = (e.payload for e in run.ended("read_file"))
    assert coder["output"] == architect["output"]
    assert NUMBERED_BUGGY_LINE in coder["output"]


def test_edit_takes_old_text_copied_with_consecutive_line_numbers_only() -> None:
    text = "a\nb\n\nc\n"
    assert (
        replace_exactly_once(text, "   2| b\n   3| \n   4| c\n", "   2| B\n   3|\n   4| C\n", "f").text == "a\nB\n\nC\n"
    )
    assert replace_exactly_once(text, "   2| b\n", "B\n", "f").text == "a\nB\n\nc\n"
    with pytest.raises(ToolRejected, match="was not found"):
        replace_exactly_once(text, "   2| b\n   4| c\n", "x\n", "f")
