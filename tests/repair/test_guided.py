"""Guided repair in a whole run: the harness localizes, the scripted model stands where the
model stands and proposes, the checks decide, and only a passing edit reaches the workspace."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from protoagent.events import Event, MemoryStore
from protoagent.repair.candidates import REPAIR_AGENT
from protoagent.testing import ScriptedModel
from protoagent.tools.approvals import Answerer, ApprovalAnswer, ApprovalRequest, Policy
from protoagent.workflow.run import RunOptions, RunReport, run_task

from .support import DATE_REPO, DATES, repo

OLD = "    return int(year), int(day), int(month)"
WRONG = "    return int(day), int(month), int(year)"
RIGHT = "    return int(year), int(month), int(day)"


@pytest.fixture(autouse=True)
def model_candidates_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These runs pin what the model's candidates do: the operator phase would fix the bug first."""
    monkeypatch.setenv("PROTOAGENT_REPAIR_OPERATORS", "off")


def candidate(new: str) -> dict[str, Any]:
    return {"role": REPAIR_AGENT, "text": json.dumps({"path": "dates.py", "old": OLD, "new": new})}


def run(
    tmp_path: Path, turns: Sequence[dict[str, Any]], approval: Policy = "auto", answerer: Answerer | None = None
) -> tuple[RunReport, list[Event], Path]:
    root = repo(tmp_path, DATE_REPO, git=True)
    store = MemoryStore()
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=store,
        approval=approval,
        answerer=answerer,
        surface="editing",
        provider=ScriptedModel.from_lines(turns),
        profile="small",
        tester=False,
        artifacts_root=tmp_path / "artifacts",
        data_home=tmp_path / "home",
    )
    report = asyncio.run(run_task("fix the failing date parser test", options))
    return report, store.load(report.session_id), root


def of(events: Sequence[Event], kind: str) -> list[Event]:
    return [e for e in events if e.type == kind]


def edits(events: Sequence[Event]) -> list[Event]:
    return [e for e in of(events, "tool.ended") if e.payload["tool"] == "edit_file"]


def test_only_the_candidate_that_passes_is_applied_as_coders_edit_file(tmp_path: Path) -> None:
    report, events, root = run(tmp_path, [candidate(WRONG), candidate(RIGHT)])
    tried = of(events, "repair.candidate")
    assert [(e.payload["new"], e.payload["passed"]) for e in tried] == [(WRONG, False), (RIGHT, True)]
    [edit] = edits(events)
    assert (edit.agent, edit.payload["status"]) == ("coder", "ok")
    assert edit.seq > tried[-1].seq
    assert (root / "dates.py").read_text() == DATES.replace(OLD, RIGHT)
    assert report.evidence.verified and report.evidence.criteria_supported
    assert any(n.startswith("guided repair: 2 candidate edit(s) tried") and RIGHT.strip() in n for n in report.notes)


def test_a_denied_edit_applies_nothing_even_when_a_candidate_passed(tmp_path: Path) -> None:
    async def checks_only(request: ApprovalRequest) -> ApprovalAnswer:
        if request.effect == "write":
            return ApprovalAnswer.deny("not now")
        return ApprovalAnswer.once()

    report, events, root = run(tmp_path, [candidate(RIGHT)], approval="ask", answerer=checks_only)
    assert [e.payload["passed"] for e in of(events, "repair.candidate")] == [True]
    assert [e.payload["status"] for e in edits(events)] == ["denied"]
    assert of(events, "repair.ended")[-1].payload["status"] == "not_applied"
    assert (root / "dates.py").read_text() == DATES
    assert not report.evidence.applied


def test_when_no_candidate_passes_nothing_is_applied(tmp_path: Path) -> None:
    turns = [candidate(WRONG), candidate("    return year, month, day"), {"role": "architect", "text": "not fixed"}]
    report, events, root = run(tmp_path, turns)
    assert [e.payload["passed"] for e in of(events, "repair.candidate")] == [False, False]
    assert edits(events) == []
    assert (root / "dates.py").read_text() == DATES
    assert any("guided repair: 2 candidate edit(s) tried" in n and "none passed" in n for n in report.notes)


def test_guided_repair_off_leaves_the_edit_phase_to_the_architect(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_GUIDED_REPAIR", "off")
    report, events, root = run(tmp_path, [candidate(RIGHT), {"role": "architect", "text": "not fixed"}])
    assert not [e for e in events if e.type.startswith("repair.")]
    assert (root / "dates.py").read_text() == DATES
    assert not report.evidence.applied


def test_scratch_checks_of_model_written_candidates_need_approval_like_any_check(tmp_path: Path) -> None:
    async def not_the_repair(request: ApprovalRequest) -> ApprovalAnswer:
        if request.preview.startswith("guided repair:"):
            return ApprovalAnswer.deny("not model-written code")
        return ApprovalAnswer.once()

    # The person approves the baseline check but not the scratch checks: no candidate code runs.
    turns = [candidate(RIGHT), {"role": "architect", "text": "not fixed"}]
    report, events, root = run(tmp_path, turns, approval="ask", answerer=not_the_repair)
    [decided] = [e for e in of(events, "approval.decided") if e.agent == "repair"]
    assert decided.payload["decision"] == "deny"
    assert of(events, "repair.candidate") == []
    assert of(events, "repair.ended")[-1].payload["status"] == "skipped"
    assert "scratch checks not approved" in of(events, "repair.ended")[-1].payload["reason"]
    assert (root / "dates.py").read_text() == DATES
    assert not report.evidence.applied


def test_a_person_approving_the_scratch_checks_lets_guided_repair_run(tmp_path: Path) -> None:
    asked: list[str] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.preview)
        return ApprovalAnswer.once()

    report, events, root = run(tmp_path, [candidate(RIGHT)], approval="ask", answerer=approve)
    assert report.evidence.applied
    assert any(p.startswith("guided repair: apply up to") and "scratch copy" in p for p in asked)
    assert [e.payload["passed"] for e in of(events, "repair.candidate")] == [True]
    assert (root / "dates.py").read_text() == DATES.replace(OLD, RIGHT)
