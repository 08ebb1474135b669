"""After a passing verify the run closes without another lead request only when every recorded
criterion is covered by a check; otherwise the lead gets one closing request with the criteria and
the run's final diff, and confirms (``review_criteria``) or sends one repair."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .support import BUGGY, BUGGY_LINE, DATE_REPO, FIXED_LINE, call, run_workflow, sha

FIX = "fix the failing date parser test"
CHANGELOG = "CHANGELOG.md gets a bullet under Unreleased"
ENTRY = "## Unreleased\n\n- parse_date keeps the month\n"
FIXED_REPO = {**DATE_REPO, "dates.py": BUGGY.replace(BUGGY_LINE, FIXED_LINE)}
VERIFY: dict[str, Any] = {"name": "run_check", "arguments": {"check_id": "unittest", "phase": "verify"}}


def _fix(*, log: bool) -> list[dict[str, Any]]:
    create = call("create_file", "coder", path="CHANGELOG.md", content=ENTRY)
    return [
        call("coder", "architect", task="fix the swapped return in dates.py" + (" and log it" if log else "")),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=FIXED_LINE, expected_revision=sha(BUGGY)),
        *([create] if log else []),
        call("report_task", "coder", status="done", summary="fixed"),
    ]


def _batch(*calls: dict[str, Any]) -> dict[str, Any]:
    return {"role": "architect", "tool_calls": list(calls)}


def _phases(run: Any) -> list[str]:
    return [e.payload["phase"] for e in run.of("workflow.phase")]


def test_a_criterion_no_check_sees_gets_one_closing_request_with_the_diff_and_the_review_closes_the_run(
    tmp_path: Path,
) -> None:
    review = {"name": "review_criteria", "arguments": {"met": [2], "note": "the diff adds the bullet"}}
    turns = [
        call("plan_task", "architect", criteria=["unittest passes", CHANGELOG]),
        *_fix(log=True),
        _batch(VERIFY),
        _batch(review),
    ]
    run = run_workflow(tmp_path, FIX, turns)
    architect = run.requests("architect")
    assert len(architect) == 4 and run.model.remaining == 0  # the review's request is the last one
    review_messages = architect[3].messages
    assert all(m.role == "user" for m in review_messages)  # a fresh conversation: no earlier reads or calls
    assert sum(len(m.content) for m in review_messages) < sum(len(m.content) for m in architect[2].messages)
    closing = review_messages[0].content
    assert "no check result shows criteria [2] met" in closing
    assert "1. unittest passes (covered by a check)" in closing and f"2. {CHANGELOG} (no check)" in closing
    assert "+- parse_date keeps the month" in closing and "+    return int(year), int(month), int(day)" in closing
    assert "review_criteria" in {t.name for t in architect[3].tools}
    assert _phases(run).count("review") == 1
    assert [c["support"] for c in run.json["criteria"]] == ["check", "review"]
    assert run.json["status"] == "completed" and run.json["verified"] is True


def test_the_closing_request_may_send_one_repair_and_the_run_closes_after_its_passing_verify(tmp_path: Path) -> None:
    repair = {"name": "coder", "arguments": {"task": "add the CHANGELOG.md bullet"}}
    review = {"name": "review_criteria", "arguments": {"met": [2], "note": "the bullet is there now"}}
    turns = [
        call("plan_task", "architect", criteria=["unittest passes", CHANGELOG]),
        *_fix(log=False),
        _batch(VERIFY),
        _batch(repair, VERIFY, review),
        call("create_file", "coder", path="CHANGELOG.md", content=ENTRY),
        call("report_task", "coder", status="done", summary="logged"),
    ]
    run = run_workflow(tmp_path, FIX, turns)
    assert len(run.requests("architect")) == 4 and len(run.requests("coder")) == 4
    assert run.model.remaining == 0
    assert (run.root / "CHANGELOG.md").read_text() == ENTRY
    assert _phases(run).count("review") == 1 and "repair" not in _phases(run)
    assert [c["support"] for c in run.json["criteria"]] == ["check", "review"]
    assert run.json["status"] == "completed" and run.json["verified"] is True


def test_every_criterion_covered_by_a_check_closes_without_a_closing_request(tmp_path: Path) -> None:
    turns = [call("plan_task", "architect", criteria=["unittest passes"]), *_fix(log=False), _batch(VERIFY)]
    run = run_workflow(tmp_path, FIX, turns)
    assert len(run.requests("architect")) == 3 and run.model.remaining == 0
    assert "review" not in _phases(run)
    assert run.json["criteria"] == [{"text": "unittest passes", "support": "check", "evidence": ["unittest"]}]
    assert run.json["status"] == "completed"


def test_the_small_profile_has_no_review_tool_so_it_closes_and_reports_the_criterion_unsupported(
    tmp_path: Path,
) -> None:
    objective = "add a changelog entry for the date fix to CHANGELOG.md"
    turns = [
        call("coder", "architect", task="add a changelog entry to CHANGELOG.md"),
        call("create_file", "coder", path="CHANGELOG.md", content=ENTRY),
        call("report_task", "coder", status="done", summary="entry added"),
        _batch(VERIFY),
    ]
    run = run_workflow(tmp_path, objective, turns, files=FIXED_REPO, profile="small")
    assert all("review_criteria" not in {t.name for t in r.tools} for r in run.requests("architect"))
    assert len(run.requests("architect")) == 2 and run.model.remaining == 0
    assert "review" not in _phases(run)
    assert run.json["criteria"] == [{"text": objective, "support": "unsupported", "evidence": []}]
    assert run.json["verified"] is True and run.json["status"] == "incomplete"
