"""Workflow-level stuck detection and the small profile's own budgets, on scripted per-role models."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from protoagent.events import MemoryStore
from protoagent.testing import ScriptedModel, make_repo
from protoagent.workflow.limits import SMALL_LIMITS, STANDARD_LIMITS, limits_for
from protoagent.workflow.run import RunOptions, run_task

from .support import BUGGY, DATE_REPO, TESTS, Run, call, run_workflow, say, sha

OBJECTIVE = "fix the failing date parser test"
PASSING = {"dates.py": BUGGY.replace("int(day), int(month)", "int(month), int(day)"), "test_dates.py": TESTS}


def _reads(count: int) -> list[dict[str, Any]]:
    """Coder reads without editing (alternating files, so no single step repeats itself)."""
    return [call("read_file", "coder", path=("dates.py", "test_dates.py")[i % 2]) for i in range(count)]


def _redelegations(task: str, rounds: int, coder_calls: int) -> list[dict[str, Any]]:
    """An Architect that hands Coder the same assignment round after round; Coder only reads."""
    turns: list[dict[str, Any]] = []
    for _ in range(rounds):
        turns += [call("coder", "architect", task=task), *_reads(coder_calls)]
    return turns


def _small_run(tmp_path: Path, turns: Sequence[Mapping[str, Any]], files: Mapping[str, str] = DATE_REPO) -> Run:
    root = make_repo(tmp_path / "repo", files)
    model = ScriptedModel.from_lines(turns)
    store = MemoryStore()
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=store,
        approval="auto",
        surface="editing",
        provider=model,
        profile="small",
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    report = asyncio.run(run_task(OBJECTIVE, options))
    return Run(report, store.load(report.session_id), model, root)


def _requests(run: Run, role: str) -> int:
    return sum(1 for r in run.model.requests if r.agent_role == role)


def test_same_assignment_after_a_window_without_edits_ends_the_phase_stuck(tmp_path: Path) -> None:
    # The loop from the embedded model's demo: the same failing Coder assignment, window after window.
    turns = _redelegations("Fix dates.py", 10, 9)
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    stuck = run.of("workflow.stuck")
    assert len(stuck) == 1
    assert "same assignment again after a Coder window that made no edit" in stuck[0].payload["reason"]
    # The repeated assignment got no model call: one Coder window, two Architect delegations.
    assert _requests(run, "coder") == 9 and _requests(run, "architect") == 2
    assert len(run.model.requests) <= 12
    report = run.json
    assert report["status"] == "incomplete" and not report["applied"]
    assert any("stuck" in note and "same assignment" in note for note in report["notes"])
    reported = run.of("evidence.reported")[0].payload["notes"]
    assert any("stuck" in note for note in reported)
    assert run.of("run.ended")[-1].payload["status"] == "incomplete"


def test_wording_of_a_repeated_assignment_does_not_make_it_new(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="Fix dates.py"),
        *_reads(9),
        call("coder", "architect", task="  fix   DATES.PY!  "),
        *_redelegations("fix dates.py", 5, 9),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert len(run.of("workflow.stuck")) == 1
    assert _requests(run, "coder") == 9


def test_repeating_an_assignment_whose_change_failed_the_checks_ends_the_phase(tmp_path: Path) -> None:
    wrong = BUGGY.replace("return int(year)", "return  int(year)")
    attempt = [
        call("coder", "architect", task="swap the return values in dates.py"),
        call(
            "edit_file",
            "coder",
            path="dates.py",
            old="return int(year)",
            new="return  int(year)",
            expected_revision=sha(BUGGY),
        ),
        call("report_task", "coder", status="done", summary="edited"),
        say("done", "coder"),
        say("Edited dates.py.", "architect"),
    ]
    again = [
        call("coder", "architect", task="Swap the return values in dates.py."),
        call(
            "edit_file",
            "coder",
            path="dates.py",
            old="return  int(year)",
            new="return int(year)",
            expected_revision=sha(wrong),
        ),
        say("again", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, [*attempt, *again, *again])
    stuck = run.of("workflow.stuck")
    assert len(stuck) == 1 and "checks already failed" in stuck[0].payload["reason"]
    assert len(run.ended("edit_file")) == 1, "the repeated failing assignment never reached Coder's model"
    assert [e.payload["phase"] for e in run.of("workflow.phase")].count("repair") == 1
    assert run.json["status"] == "incomplete"
    assert any("checks already failed" in note for note in run.json["notes"])


def test_three_assignments_in_a_row_without_an_edit_end_the_phase(tmp_path: Path) -> None:
    turns: list[dict[str, Any]] = []
    for n in range(6):
        turns += [
            call("coder", "architect", task=f"look at part {n} of dates.py"),
            call("report_task", "coder", status="done", summary="looked"),
        ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    stuck = run.of("workflow.stuck")
    assert len(stuck) == 1 and stuck[0].payload["reason"] == "3 Coder assignments in a row made no edit"
    assert len(run.of("worker.ended")) == 3
    assert run.json["status"] == "incomplete"


def test_repeated_assignment_that_keeps_making_edits_is_not_stuck(tmp_path: Path) -> None:
    turns: list[dict[str, Any]] = []
    for n in range(2):
        turns += [
            call("coder", "architect", task="write the release notes"),
            call("create_file", "coder", path=f"note_{n}.md", content=f"{n}\n"),
            call("report_task", "coder", status="done", summary="one note"),
        ]
    turns.append(call("review_criteria", "architect", met=[1], note="both notes are written"))
    turns.append(say("Both notes written.", "architect"))
    run = run_workflow(tmp_path, "write the release notes", turns, files=PASSING)
    assert not run.of("workflow.stuck")
    assert run.json["status"] == "completed"
    assert run.model.remaining == 0


def test_stuck_run_with_an_edit_still_gets_its_final_checks(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="add a note"),
        call("create_file", "coder", path="helper.py", content="VALUE = 1\n"),
        call("report_task", "coder", status="done", summary="note"),
        say("done", "coder"),
        *[
            turn
            for n in range(4)
            for turn in (
                call("coder", "architect", task=f"fix part {n}"),
                call("report_task", "coder", status="done", summary="nothing"),
                say("nothing", "coder"),
            )
        ],
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert len(run.of("workflow.stuck")) == 1
    assert [c["phase"] for c in run.json["checks"]] == ["baseline", "verify"]
    assert run.json["applied"] is True and run.json["status"] == "incomplete"


def test_small_profile_has_its_own_smaller_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROTOAGENT_CODER_MAX_WINDOWS", raising=False)
    small, standard = limits_for("small"), limits_for("standard")
    assert small == SMALL_LIMITS and standard == STANDARD_LIMITS
    assert small.model_calls < standard.model_calls
    assert small.lead_steps < standard.lead_steps
    assert small.coder_window_calls < standard.coder_window_calls
    assert small.coder_windows < standard.coder_windows
    assert limits_for("small", 50).model_calls == 50
    assert limits_for("small", environ={"PROTOAGENT_CODER_MAX_WINDOWS": "3"}).coder_windows == 3
    assert limits_for("small", environ={"PROTOAGENT_CODER_MAX_WINDOWS": "x"}).coder_windows == small.coder_windows


def test_small_profile_run_spends_at_most_its_budgets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PROTOAGENT_CODER_MAX_WINDOWS", raising=False)
    monkeypatch.setenv("PROTOAGENT_GUIDED_REPAIR", "off")  # its edit operators fix this bug with no model
    reads = [call("read_file", "architect", path="dates.py") for _ in range(40)]
    run = _small_run(tmp_path, [call("coder", "architect", task="fix it"), *_reads(20), *reads])
    assert _requests(run, "coder") == SMALL_LIMITS.coder_window_calls
    assert _requests(run, "architect") <= SMALL_LIMITS.lead_steps * 3
    assert len(run.model.requests) <= SMALL_LIMITS.model_calls
    assert run.json["status"] != "completed"


def test_same_tester_assignment_with_nothing_changed_ends_the_phase(tmp_path: Path) -> None:
    # The embedded model's demo also asks Tester the same question over and over.
    ask = [
        call("tester", "architect", task="test_parses_year_month_day"),
        call("report_task", "tester", status="done", summary="passed"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, ask * 5)
    stuck = run.of("workflow.stuck")
    assert len(stuck) == 1 and "Tester the same assignment again" in stuck[0].payload["reason"]
    assert _requests(run, "tester") == 1 and _requests(run, "architect") == 2
    assert any("stuck" in note for note in run.json["notes"])
