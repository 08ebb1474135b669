"""``criteria_supported`` is about the criteria: each recorded criterion says what supports it
(a check, the lead's review of the final diff, or nothing), and the flag is their conjunction."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from protoagent.api import read_report

from .support import BUGGY, BUGGY_LINE, DATE_REPO, FIXED_LINE, call, run_workflow, say, sha

FIX = "fix the failing date parser test"
TEST_ID = "test_dates.ParseDateTest.test_parses_year_month_day"
CHANGELOG = "CHANGELOG.md gets a bullet under Unreleased; the newest entry comes first"
FIXED_REPO = {**DATE_REPO, "dates.py": BUGGY.replace(BUGGY_LINE, FIXED_LINE)}
VERIFY = {"name": "run_check", "arguments": {"check_id": "unittest", "phase": "verify"}}


def _coder_fixes_and_logs() -> list[dict[str, Any]]:
    return [
        call("coder", "architect", task="fix the swapped return and add a changelog bullet"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY)),
        call("create_file", "coder", path="CHANGELOG.md", content="## Unreleased\n\n- parse_date keeps the month\n"),
        call("report_task", "coder", status="done", summary="fixed and logged"),
    ]


def _review_and_verify(met: list[int]) -> dict[str, Any]:
    review = {"name": "review_criteria", "arguments": {"met": met, "note": "the diff adds the bullet"}}
    return {"role": "architect", "tool_calls": [review, VERIFY]}


def test_a_fix_without_recorded_criteria_is_supported_by_the_test_it_turned_from_failing_to_passing(
    tmp_path: Path,
) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped return"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY)),
        call("report_task", "coder", status="done", summary="fixed"),
        say("Fixed.", "architect"),
    ]
    run = run_workflow(tmp_path, FIX, turns)
    assert run.json["criteria"] == [{"text": FIX, "support": "check", "evidence": [TEST_ID]}]
    assert run.json["criteria_supported"] is True and run.json["status"] == "completed"


def test_a_run_without_recorded_criteria_that_no_check_speaks_to_is_unsupported(tmp_path: Path) -> None:
    objective = "add a changelog entry for the date fix"
    turns = [
        call("coder", "architect", task="add a changelog entry"),
        call("create_file", "coder", path="CHANGELOG.md", content="- fixed parse_date\n"),
        call("report_task", "coder", status="done", summary="entry added"),
        say("Changelog updated.", "architect"),
        say("Not reviewed.", "architect"),  # the closing request, answered without a review
    ]
    run = run_workflow(tmp_path, objective, turns, files=FIXED_REPO)
    assert run.json["verified"] is True
    assert run.json["criteria"] == [{"text": objective, "support": "unsupported", "evidence": []}]
    assert run.json["criteria_supported"] is False and run.json["status"] == "incomplete"
    assert any(n.startswith(f"criterion {objective!r} is unsupported") for n in run.json["notes"])


def test_a_criterion_no_check_can_see_is_unsupported_even_when_every_check_passes(tmp_path: Path) -> None:
    criteria = ["test_parses_year_month_day passes", CHANGELOG]
    turns = [
        call("plan_task", "architect", criteria=criteria),
        *_coder_fixes_and_logs(),
        call("run_check", "architect", check_id="unittest", phase="verify"),
        say("Not reviewed.", "architect"),  # the closing request, answered without a review
    ]
    run = run_workflow(tmp_path, FIX, turns)
    assert run.json["verified"] is True
    assert run.json["criteria"] == [
        {"text": criteria[0], "support": "check", "evidence": [TEST_ID]},
        {"text": CHANGELOG, "support": "unsupported", "evidence": []},
    ]
    assert run.json["criteria_supported"] is False and run.json["status"] == "incomplete"


def test_the_leads_review_of_the_final_diff_supports_a_criterion_and_is_labelled_review(tmp_path: Path) -> None:
    turns = [
        call("plan_task", "architect", criteria=["unittest passes", CHANGELOG]),
        *_coder_fixes_and_logs(),
        _review_and_verify([2]),
    ]
    run = run_workflow(tmp_path, FIX, turns)
    (review,) = run.ended("review_criteria")
    assert run.json["criteria"] == [
        {"text": "unittest passes", "support": "check", "evidence": ["unittest"]},
        {"text": CHANGELOG, "support": "review", "evidence": [f"review:{review.seq}"]},
    ]
    assert run.json["criteria_supported"] is True and run.json["status"] == "completed"
    recorded = read_report(run.json["session_id"], _store_of(run))
    assert recorded["criteria"] == run.json["criteria"]


def test_a_review_made_before_the_last_change_does_not_support_anything(tmp_path: Path) -> None:
    turns = [
        call("plan_task", "architect", criteria=[CHANGELOG]),
        call("review_criteria", "architect", met=[1], note="too early"),
        *_coder_fixes_and_logs(),
        call("run_check", "architect", check_id="unittest", phase="verify"),
    ]
    run = run_workflow(tmp_path, FIX, turns)
    assert run.json["criteria"] == [{"text": CHANGELOG, "support": "unsupported", "evidence": []}]
    assert run.json["criteria_supported"] is False


def test_plan_criteria_stay_a_list_end_to_end_even_with_a_semicolon_inside_one(tmp_path: Path) -> None:
    turns = [
        call("plan_task", "architect", criteria=[CHANGELOG]),
        say("Planned.", "architect"),
    ]
    run = run_workflow(tmp_path, FIX, turns)
    planned = [e for e in run.of("task.updated") if e.payload["reason"] == "plan_task"][-1]
    assert list(planned.payload["record"]["criteria"]) == [CHANGELOG]
    shown = "\n".join(m.content for m in run.requests("architect")[-1].messages)
    assert "criteria: " + json.dumps([CHANGELOG]) in shown
    assert [c["text"] for c in run.json["criteria"]] == [CHANGELOG]


def test_review_of_a_criterion_that_does_not_exist_is_rejected_with_the_criteria(tmp_path: Path) -> None:
    turns = [
        call("plan_task", "architect", criteria=[CHANGELOG]),
        call("review_criteria", "architect", met=[3]),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, FIX, turns)
    (rejected,) = run.ended("review_criteria")
    assert rejected.payload["status"] == "rejected"
    assert "criteria positions [3] do not exist; the record has 1 (1-1)" in rejected.payload["output"]


def _store_of(run: Any) -> Any:
    from protoagent.events import MemoryStore

    store = MemoryStore()
    for event in run.events:
        store.append(event)
    return store


def test_a_question_records_no_coding_criteria_and_no_criterion_note(tmp_path: Path) -> None:
    question = "where is parse_date defined?"
    run = run_workflow(tmp_path, question, [say("In dates.py.", "architect")], surface="question")
    assert run.json["status"] == "completed" and run.json["criteria"] == []
    assert not any(n.startswith("criterion ") for n in run.json["notes"])
