"""The workflow graph on scripted per-role models: baseline → edit → verify → repair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from protoagent.workflow.evidence import compute_evidence
from protoagent.workflow.task import current_task

from .support import BUGGY, DATE_REPO, TESTS, call, fix_turns, run_workflow, say, sha

OBJECTIVE = "fix the failing date parser test"
PASSING = {"dates.py": BUGGY.replace("int(day), int(month)", "int(month), int(day)"), "test_dates.py": TESTS}


def test_end_to_end_failing_test_is_fixed_applied_and_verified(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        *fix_turns(),
        say("Fixed parse_date; the unittest check passes.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    report = run.json
    assert report["status"] == "completed", report
    assert report["applied"] and report["verified"] and report["criteria_supported"]
    assert report["changed_files"] == ["dates.py"]
    assert [(c["phase"], c["outcome"]) for c in report["checks"]] == [("baseline", "failed"), ("verify", "passed")]
    baseline = run.ended("run_check")[0].seq
    edit = run.ended("edit_file")[0]
    approval = next(e for e in run.of("approval.decided") if e.payload["call_id"] == edit.payload["call_id"])
    verify = run.ended("run_check")[1].seq
    assert baseline < approval.seq < edit.seq < verify


def test_baseline_results_never_satisfy_verification(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, OBJECTIVE, [say("Nothing to change.", "architect")], files=PASSING)
    assert [c["phase"] for c in run.json["checks"]] == ["baseline"]
    assert run.json["checks"][0]["outcome"] == "passed"
    assert run.json["verified"] is False and run.json["status"] == "incomplete"


def test_repairs_stop_after_two_completed_failing_final_checks(tmp_path: Path) -> None:
    first = BUGGY.replace("return int(year)", "return  int(year)")
    turns = [
        call("coder", "architect", task="attempt 1"),
        call(
            "edit_file",
            "coder",
            path="dates.py",
            old="return int(year)",
            new="return  int(year)",
            expected_revision=sha(BUGGY),
        ),
        say("done", "coder"),
        say("tried", "architect"),
        call("coder", "architect", task="attempt 2"),
        call(
            "edit_file",
            "coder",
            path="dates.py",
            old="return  int(year)",
            new="return int(year)",
            expected_revision=sha(first),
        ),
        say("done", "coder"),
        say("tried again", "architect"),
        call("coder", "architect", task="attempt 3"),
        call(
            "edit_file",
            "coder",
            path="dates.py",
            old="return int(year)",
            new="return  int(year)",
            expected_revision=sha(BUGGY),
        ),
        say("done", "coder"),
        say("still failing", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    repairs = [e.payload for e in run.of("workflow.phase") if e.payload["phase"] == "repair"]
    assert [r["attempt"] for r in repairs] == [1, 2]
    verifies = [c for c in run.json["checks"] if c["phase"] == "verify"]
    assert [c["outcome"] for c in verifies] == ["failed", "failed", "failed"]
    assert run.json["status"] == "incomplete" and run.json["verified"] is False and run.json["applied"] is True
    assert run.model.remaining == 0


def test_missing_runner_reports_verification_unavailable_and_ends_unverified(tmp_path: Path) -> None:
    config = {
        "checks": [
            {
                "id": "pytest",
                "argv": ["python", "-m", "no_such_runner_xyz"],
                "cwd": ".",
                "env": {"PATH": "/usr/bin:/bin"},
                "paths": ["dates.py"],
            }
        ]
    }
    files = {**DATE_REPO, ".protoagent/project.json": json.dumps(config)}
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=files)
    assert run.of("verification.unavailable")
    assert not [e for e in run.of("workflow.phase") if e.payload["phase"] == "repair"]
    assert run.json["applied"] is True and run.json["verified"] is False
    assert run.json["verification"] == "unavailable" and run.json["status"] == "incomplete"
    assert any(n.startswith("setup: check 'pytest' could not run") for n in run.json["notes"])


def test_dont_run_it_defers_verification_at_once(tmp_path: Path) -> None:
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    run = run_workflow(tmp_path, "fix the date parser, don't run the tests, I'll do it", turns)
    assert [c["phase"] for c in run.json["checks"]] == ["baseline"]
    assert run.json["verification"] == "deferred"
    assert run.json["applied"] is True and run.json["verified"] is False and run.json["criteria_supported"] is False


def test_unresolved_worker_report_prevents_completion(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix dates.py"),
        *fix_turns()[:2],
        call("report_task", "coder", status="needs_context", summary="where is the spec?", missing_paths=["SPEC.md"]),
        say("Coder needs the spec.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert run.json["verified"] is True
    assert run.json["criteria_supported"] is False and run.json["status"] == "incomplete"
    assert any("unresolved" in n for n in run.json["notes"])


def test_source_change_after_final_check_makes_evidence_stale(tmp_path: Path) -> None:
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert run.json["verified"] is True
    (run.root / "dates.py").write_text((run.root / "dates.py").read_text() + "# later change\n")
    record = current_task(run.events)
    assert record is not None
    evidence = compute_evidence(run.events, run.root, record)
    assert evidence.applied is False and evidence.verified is False


def test_zero_tests_never_verify_a_change(tmp_path: Path) -> None:
    files = {"slug.py": "def slugify(text):\n    return text\n"}
    turns = [
        call("coder", "architect", task="lower-case in slugify"),
        call(
            "replace_file",
            "coder",
            path="slug.py",
            content="def slugify(text):\n    return text.lower()\n",
            expected_revision=sha(files["slug.py"]),
        ),
        say("done", "coder"),
        say("changed slugify", "architect"),
    ]
    run = run_workflow(tmp_path, "make slugify lower-case the text", turns, files=files)
    verify = [c for c in run.json["checks"] if c["phase"] == "verify"]
    assert verify and verify[0]["id"] == "python-tests" and verify[0]["tests_run"] == 0
    assert verify[0]["outcome"] == "failed" and run.json["verified"] is False


def test_plan_corrections_are_limited_per_inference(tmp_path: Path) -> None:
    bad = [call("plan_task", "architect", check_ids=["made-up"]) for _ in range(3)]
    run = run_workflow(tmp_path, OBJECTIVE, [*bad, say("giving up on planning", "architect")], files=PASSING)
    kinds = [e.payload["data"]["kind"] for e in run.ended("plan_task")]
    assert kinds == ["unknown_check_ids", "unknown_check_ids", "plan_corrections_exhausted"]
    record = current_task(run.events)
    assert record is not None and record.selected_check_ids == ("unittest",)


def test_plan_freezes_once_a_write_is_proposed(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix dates.py"),
        *fix_turns(),
        call("plan_task", "architect", paths=["dates.py"], check_ids=[]),
        say("done", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert run.ended("plan_task")[0].payload["data"]["kind"] == "plan_frozen"


def test_writes_outside_the_planned_scope_are_denied(tmp_path: Path) -> None:
    turns = [
        call("plan_task", "architect", paths=["dates.py"]),
        call("coder", "architect", task="add notes"),
        call("create_file", "coder", path="notes.py", content="x = 1\n"),
        say("blocked", "coder"),
        say("scope prevented it", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    ended = run.ended("create_file")[0].payload
    assert ended["status"] == "denied" and "outside the planned write scope" in ended["output"]
    assert not (run.root / "notes.py").exists()


def test_denied_final_check_stops_autonomous_repair(tmp_path: Path) -> None:
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns, approval="auto-edit")
    outcomes = [(c["phase"], c["outcome"]) for c in run.json["checks"]]
    assert outcomes == [("baseline", "denied"), ("verify", "denied")]
    assert not [e for e in run.of("workflow.phase") if e.payload["phase"] == "repair"]
    assert run.json["applied"] is True and run.json["verified"] is False and run.json["status"] == "incomplete"


def test_tester_can_be_turned_off(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, OBJECTIVE, [say("nothing", "architect")], files=PASSING, tester=False)
    offered = {t.name for t in run.model.requests[0].tools}
    assert "tester" not in offered and "coder" in offered


def _creates(count: int, start: int = 0) -> list[dict[str, object]]:
    return [call("create_file", "coder", path=f"note_{i}.md", content=f"{i}\n") for i in range(start, start + count)]


def test_coder_window_without_new_edits_is_blocked_no_progress(tmp_path: Path) -> None:
    reads = [call("read_file", "coder", path="dates.py") for _ in range(9)]
    turns = [call("coder", "architect", task="fix dates.py"), *reads, say("gave up", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    coder = run.ended("coder")[0].payload["data"]
    assert (coder["status"], coder["reason"]) == ("blocked", "worker_no_progress")
    assert not run.of("worker.continuing")


def test_progressing_coder_earns_windows_then_architect_yields_and_graph_continues(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_CODER_MAX_WINDOWS", "2")
    turns = [
        call("coder", "architect", task="write the notes"),
        *_creates(17),
        call("read_file", "coder", path="note_0.md"),  # the last window ends on a read, unfinished
        call("coder", "architect", task="finish the last note"),
        *_creates(1, 18),
        call("report_task", "coder", status="done", summary="all notes written"),
        call("review_criteria", "architect", met=[1], note="every note file is written"),
        say("All notes written.", "architect"),
    ]
    run = run_workflow(tmp_path, "write the release notes", turns, files=PASSING)
    assert [e.payload["window"] for e in run.of("worker.continuing")] == [2]
    first = run.ended("coder")[0].payload["data"]
    assert (first["status"], first["reason"], first["windows"]) == ("needs_context", "worker_turn_limit", 2)
    assert len(run.of("workflow.work_yielded")) == 1 and len(run.of("workflow.continuing")) == 1
    second = run.ended("coder")[1].payload["data"]
    assert second["status"] == "done"
    assert run.json["criteria_supported"] is True
    assert run.model.remaining == 0


@pytest.mark.parametrize(("raw", "expected"), [("1", 1), ("3", 3), ("7", 3), ("0", 1), ("many", 3)])
def test_coder_max_windows_is_clamped(raw: str, expected: int) -> None:
    from protoagent.workflow.limits import limits_for

    assert limits_for("standard", environ={"PROTOAGENT_CODER_MAX_WINDOWS": raw}).coder_windows == expected


def test_graph_continues_yielded_work_at_most_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROTOAGENT_CODER_MAX_WINDOWS", "1")
    turns = []
    for attempt in range(3):
        reread = call("read_file", "coder", path=f"note_{attempt * 9}.md")
        turns += [call("coder", "architect", task=f"write notes batch {attempt}"), *_creates(8, attempt * 9), reread]
    run = run_workflow(tmp_path, "write the release notes", turns, files=PASSING)
    assert len(run.of("workflow.continuing")) == 2
    assert len(run.of("workflow.work_yielded")) == 3
    assert all(e.payload["data"]["reason"] == "worker_turn_limit" for e in run.ended("coder"))
    assert run.json["applied"] is True and run.json["status"] == "incomplete"
    assert not [c for c in run.json["checks"] if c["phase"] == "verify"]
    assert run.model.remaining == 0


def test_denied_effect_is_never_turned_into_a_continuation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROTOAGENT_CODER_MAX_WINDOWS", "1")
    notes = [call("create_file", "coder", path=f"notes/n{i}.md", content=f"{i}\n") for i in range(8)]
    turns = [
        call("plan_task", "architect", paths=["notes"]),
        call("coder", "architect", task="write notes"),
        *notes,
        call("create_file", "coder", path="other.md", content="x\n"),
    ]
    run = run_workflow(tmp_path, "write the release notes", turns, files=PASSING)
    assert run.ended("create_file")[-1].payload["status"] == "denied"
    assert len(run.of("workflow.work_yielded")) == 1
    assert not run.of("workflow.continuing")
    assert run.json["status"] == "incomplete"


def test_documentation_only_change_may_complete_unverified(tmp_path: Path) -> None:
    turns = [
        call("plan_task", "architect", paths=["CHANGELOG.md"], check_ids=[]),
        call("coder", "architect", task="add a changelog entry"),
        call("create_file", "coder", path="CHANGELOG.md", content="- fixed parse_date\n"),
        call("report_task", "coder", status="done", summary="entry added"),
        call("review_criteria", "architect", met=[1], note="the diff adds the entry"),
        say("Changelog updated.", "architect"),
    ]
    run = run_workflow(tmp_path, "add a changelog entry for the date fix", turns)
    assert run.json["changed_files"] == ["CHANGELOG.md"]
    assert run.json["verified"] is False and run.json["verification"] == "no_checks"
    assert run.json["applied"] is True and run.json["criteria_supported"] is True
    assert run.json["status"] == "completed"


def test_code_change_without_checks_stays_incomplete(tmp_path: Path) -> None:
    files = {**DATE_REPO, ".protoagent/project.json": json.dumps({"checks": []})}
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=files)
    assert run.json["applied"] is True and run.json["verification"] == "no_checks"
    assert run.json["criteria_supported"] is False and run.json["status"] == "incomplete"
