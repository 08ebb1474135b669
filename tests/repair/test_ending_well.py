"""Ending well on the small profile: when guided repair finds nothing the run still ends with a
report, within its time limit, with no stray files; a bug report without a verb is an editing
request. The scripted model stands where the model stands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from protoagent.repair.candidates import REPAIR_AGENT
from protoagent.workflow.contract import classify

from .support import DATES, ended, small_run

OLD = "    return int(year), int(day), int(month)"
RIGHT = "    return int(year), int(month), int(day)"
WRONG = "    return int(day), int(month), int(year)"
OBJECTIVE = "fix the failing date parser test"


@pytest.fixture(autouse=True)
def model_candidates_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """These runs pin what the model's candidates do: the operator phase would fix the bug first."""
    monkeypatch.setenv("PROTOAGENT_REPAIR_OPERATORS", "off")


def candidate(new: str) -> dict[str, Any]:
    return {"role": REPAIR_AGENT, "text": json.dumps({"path": "dates.py", "old": OLD, "new": new})}


def call(name: str, role: str, **arguments: Any) -> dict[str, Any]:
    return {"role": role, "tool_calls": [{"name": name, "arguments": arguments, "id": ""}]}


def test_a_small_profile_coder_may_not_create_a_file_the_task_does_not_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_GUIDED_REPAIR", "off")
    turns = [
        call("coder", "architect", task="fix dates.py"),
        call("create_file", "coder", path="fix_dates.py", content="print('hi')\n"),
        call("report_task", "coder", status="done", summary="nothing"),
        {"role": "architect", "text": "not fixed"},
    ]
    report, events, root = small_run(tmp_path, OBJECTIVE, turns)
    [refused] = ended(events, "create_file")
    assert refused.payload["status"] == "denied"
    output = str(refused.payload["output"])
    assert "names no file fix_dates.py" in output and "\n" not in output.strip()
    assert not (root / "fix_dates.py").exists()
    assert not report.evidence.applied


def test_a_small_profile_coder_may_create_a_file_the_task_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_GUIDED_REPAIR", "off")
    turns = [
        call("coder", "architect", task="write notes/CHANGES.md"),
        call("create_file", "coder", path="notes/CHANGES.md", content="dates fixed\n"),
        call("report_task", "coder", status="done", summary="wrote it"),
        {"role": "architect", "text": "done"},
    ]
    _, events, root = small_run(tmp_path, "fix the date parser and add notes/CHANGES.md saying so", turns)
    assert [e.payload["status"] for e in ended(events, "create_file")] == ["ok"]
    assert (root / "notes" / "CHANGES.md").read_text() == "dates fixed\n"


def test_after_guided_repair_finds_nothing_the_run_ends_with_its_report_and_no_stray_files(tmp_path: Path) -> None:
    # The Architect would go on creating and reading; the run ends when the search found nothing.
    stray = call("create_file", "architect", path="fix.py", content="x = 1\n")
    reads = [call("read_file", "architect", path="dates.py") for _ in range(30)]
    report, events, root = small_run(tmp_path, OBJECTIVE, [candidate(WRONG), stray, *reads])
    assert [e.payload["status"] for e in events if e.type == "repair.ended"] == ["none_passed"]
    assert [e for e in events if e.type == "model.requested" and e.agent == "architect"] == []
    assert any("guided repair: 1 candidate edit(s) tried" in n and "none passed" in n for n in report.notes)
    assert report.status != "completed" and not report.evidence.applied
    assert any(e.type == "run.ended" for e in events)
    assert sorted(p.name for p in root.iterdir() if p.name != ".git") == ["dates.py", "test_dates.py"]
    assert (root / "dates.py").read_text() == DATES


def test_a_run_past_its_time_limit_starts_no_model_call_and_ends_with_its_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROTOAGENT_RUN_SECONDS", "0.01")
    monkeypatch.setenv("PROTOAGENT_GUIDED_REPAIR", "off")
    reads = [call("read_file", "architect", path="dates.py") for _ in range(30)]
    report, events, root = small_run(tmp_path, OBJECTIVE, reads)
    [failed] = [e for e in events if e.type == "model.failed"]
    assert failed.payload["limit"] == "seconds"
    assert [e for e in events if e.type == "model.requested" and e.agent == "architect"] == []
    assert report.status != "completed" and not report.evidence.applied
    assert any(e.type == "run.ended" for e in events)
    assert sorted(p.name for p in root.iterdir() if p.name != ".git") == ["dates.py", "test_dates.py"]
    assert (root / "dates.py").read_text() == DATES


def test_a_bug_report_without_a_verb_is_an_editing_request_and_guided_repair_fixes_it(tmp_path: Path) -> None:
    objective = "parse_date('2024-03-15') returns (2024, 15, 3) instead of (2024, 3, 15)"
    report, events, root = small_run(tmp_path, objective, [candidate(RIGHT)], surface=None)
    [contract] = [e for e in events if e.type == "run.contract"]
    assert (contract.payload["surface"], contract.payload["source"]) == ("editing", "rules")
    assert (root / "dates.py").read_text() == DATES.replace(OLD, RIGHT)
    assert report.evidence.verified


@pytest.mark.parametrize(
    "report",
    [
        "parse_size('1 kB') returns 1024",
        "bytes2human(128991) returns '0K' instead of '126K'",
        "relative_time for two hours ahead says '-2 hours from now' instead of '2 hours from now'",
        "the slug of 'Ünïcode' is wrong",
        "test_parse fails since yesterday",
    ],
)
def test_a_bug_report_without_a_verb_is_routed_to_editing_by_the_rules(report: str) -> None:
    assert classify(report) == ("editing", "reports a bug: the behaviour it describes is to be corrected")


@pytest.mark.parametrize("question", ["why does f(1) return 2 instead of 3?", "what does parse_size return?"])
def test_a_question_about_a_symptom_stays_a_question(question: str) -> None:
    assert classify(question) == ("question", "a question about the repository")
