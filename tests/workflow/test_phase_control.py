"""Who holds control in the edit phase (spec/task-workflow.txt): a completed failing final check
returns control to the Graph, final verification closes editing, a denial stops the agent it
happened to and is never turned into a repair or a continuation; the Architect answers it once,
without tools, within the run."""

from __future__ import annotations

from pathlib import Path

from protoagent.events import Event

from .support import BUGGY, BUGGY_LINE, FIXED_LINE, Run, call, fix_turns, run_workflow, say, sha

OBJECTIVE = "fix the failing date parser test"
WRONG_LINE = "    return int(year), int(day), int(month)  # unchanged order\n"
WRONG = BUGGY.replace(BUGGY_LINE, WRONG_LINE)


def _requests_after(run: Run, seq: int, agent: str) -> list[Event]:
    return [e for e in run.events if e.type == "model.requested" and e.agent == agent and e.seq > seq]


def _wrong_fix() -> list[dict[str, object]]:
    """Coder 'fixes' dates.py with an edit that leaves the test failing."""
    return [
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=WRONG_LINE, expected_revision=sha(BUGGY)),
        call("report_task", "coder", status="done", summary="adjusted the return"),
    ]


def test_a_completed_failing_final_check_returns_control_to_the_graph_before_the_architects_next_request(
    tmp_path: Path,
) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped return in dates.py"),
        *_wrong_fix(),
        call("run_check", "architect", check_id="unittest", phase="verify"),
        # The Architect's next request is the Graph's repair turn, not a repair of its own.
        call("coder", "architect", task="repair: restore month before day"),
        call("edit_file", "coder", path="dates.py", old=WRONG_LINE, new=FIXED_LINE, expected_revision=sha(WRONG)),
        call("report_task", "coder", status="done", summary="month before day"),
        say("Fixed.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    failed = next(e for e in run.ended("run_check") if e.agent == "architect")
    assert failed.payload["data"]["outcome"] == "failed"
    returned = run.of("workflow.returned")
    assert [e.payload["reason"] for e in returned] == ["final_check_failed"]
    assert returned[0].payload["check_id"] == "unittest"
    repair = next(e for e in run.of("workflow.phase") if e.payload["phase"] == "repair")
    # No Architect request between the failing check and the Graph's repair phase.
    assert all(e.seq > repair.seq for e in _requests_after(run, failed.seq, "architect"))
    repair_prompt = next(e for e in run.of("context.injected") if e.seq > repair.seq)
    assert repair_prompt.payload["text"].startswith("Repair: final checks failed")
    # The record is in the lead's conversation once (with its updates), not again in the repair text.
    repair_request = run.requests("architect")[1]
    shown = "\n".join(m.content for m in repair_request.messages)
    assert shown.count("selected_check_ids") == 1 and "Task record:" not in shown
    assert run.json["verified"] is True and run.json["status"] == "completed"


def test_final_verification_closes_the_edit_phase(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped return in dates.py"),
        *fix_turns(),
        {
            "role": "architect",
            "tool_calls": [
                {"name": "run_check", "arguments": {"check_id": "unittest", "phase": "verify"}},
                {"name": "coder", "arguments": {"task": "also add a docstring"}},
            ],
        },
        say("Fixed and verified.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    closed = run.ended("coder")[-1].payload
    assert closed["status"] == "rejected" and closed["data"]["kind"] == "edit_phase_closed"
    assert len(run.of("worker.started")) == 1, "no second Coder assignment started"
    assert run.json["verified"] is True and run.json["status"] == "completed"


def test_a_denied_write_stops_the_coders_window_and_the_architect_answers_it_once_without_tools(
    tmp_path: Path,
) -> None:
    turns = [
        call("plan_task", "architect", paths=["dates.py"]),
        call("coder", "architect", task="fix dates.py and add notes"),
        call("create_file", "coder", path="notes.md", content="notes\n"),
        # What Coder would do next if it got another request: retry elsewhere.
        call("create_file", "coder", path="docs/notes.md", content="notes\n"),
        say("tried twice", "coder"),
        say("Notes could not be written.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    denied = run.ended("create_file")
    assert [e.payload["status"] for e in denied] == ["denied"], "the denied write was not retried"
    assert not _requests_after(run, denied[0].seq, "coder")
    answer = _requests_after(run, denied[0].seq, "architect")
    assert [e.payload["tool_names"] for e in answer] == [[]], "one request after the denial, with no tools"
    coder = run.ended("coder")[0].payload
    assert coder["data"]["status"] == "blocked" and "was denied" in coder["data"]["summary"]
    assert "outside the planned write scope" in coder["data"]["summary"], "the lead sees the denial's reason"
    assert not (run.root / "notes.md").exists() and not (run.root / "docs").exists()
    assert run.json["status"] == "incomplete" and run.json["summary"] == "Notes could not be written."


def test_a_denied_command_is_not_retried_by_the_architects_one_answer(tmp_path: Path) -> None:
    turns = [
        call("execute_command", "architect", argv=["touch", "made.txt"], env={"PATH": "/usr/bin:/bin"}),
        call("execute_command", "architect", argv=["touch", "again.txt"], env={"PATH": "/usr/bin:/bin"}),
        say("could not run it", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, approval="auto-edit")
    ended = run.ended("execute_command")
    assert [e.payload["status"] for e in ended] == ["denied", "rejected"]
    assert ended[1].payload["data"]["kind"] == "denied_run", "a retry in the answer does not run"
    assert len(_requests_after(run, ended[0].seq, "architect")) == 1
    assert run.of("workflow.returned")[0].payload["reason"] == "denied"
    assert not (run.root / "made.txt").exists() and not (run.root / "again.txt").exists()


def test_a_denial_is_never_converted_into_a_repair_or_a_continuation(tmp_path: Path) -> None:
    turns = [
        call("plan_task", "architect", paths=["dates.py"]),
        call("coder", "architect", task="fix dates.py and note it"),
        *_wrong_fix()[:1],
        call("create_file", "coder", path="NOTES.md", content="fixed\n"),
        call("report_task", "coder", status="done", summary="done"),
        say("Done.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert run.ended("create_file")[0].payload["status"] == "denied"
    phases = [e.payload["phase"] for e in run.of("workflow.phase")]
    assert "repair" not in phases
    assert not run.of("workflow.continuing")
    verifies = [c for c in run.json["checks"] if c["phase"] == "verify"]
    assert [c["outcome"] for c in verifies] == ["failed"], "the applied edit is still measured, never repaired"
    assert run.json["applied"] is True and run.json["verified"] is False and run.json["status"] == "incomplete"
