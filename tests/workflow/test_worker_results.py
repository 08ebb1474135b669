"""What workers hand back to the Architect, and what worker requests carry (issue: workflow fidelity)."""

from __future__ import annotations

from pathlib import Path

from protoagent.models.types import ModelRequest
from protoagent.workflow.task import TaskRecord

from .support import BUGGY_LINE, DATE_REPO, call, fix_turns, run_workflow, say, sha

OBJECTIVE = "fix the failing date parser test"
LONG_SUMMARY = (
    "Proposed 3 cases: (1) parse_date('2024-03-15') == (2024, 3, 15); "
    "(2) surrounding whitespace is stripped; (3) a single-digit month such as 2024-3-05 parses. "
    + "Each case belongs in test_dates.py next to the existing one. "
    * 8
)


def _text(request: ModelRequest) -> str:
    return "\n".join(m.content for m in request.messages)


def _requests(run_model_requests: list[ModelRequest], agent: str) -> list[ModelRequest]:
    return [r for r in run_model_requests if r.agent_role == agent]


def test_a_workers_report_reaches_its_caller(tmp_path: Path) -> None:
    turns = [
        call("tester", "architect", task="propose regression cases for parse_date"),
        call("read_file", "tester", path="dates.py"),
        call("report_task", "tester", status="needs_context", summary=LONG_SUMMARY, missing_paths=["SPEC.md"]),
        say("Reported: 3 cases proposed", "tester"),
        say("Noted the proposed cases.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    result = run.ended("tester")[0].payload["output"]
    assert "tester reported needs_context" in result
    assert LONG_SUMMARY.strip() in result
    assert "missing paths: SPEC.md" in result
    assert "Reported: 3 cases proposed" not in result
    seen_by_architect = _text(_requests(run.model.requests, "architect")[-1])
    assert LONG_SUMMARY.strip() in seen_by_architect


def test_a_worker_stops_at_report_task(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        *fix_turns(),
        say("a line no worker may receive after its report", "coder"),
        say("Fixed parse_date; the unittest check passes.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    assert run.json["status"] == "completed", run.json
    coder_requests = _requests(run.model.requests, "coder")
    assert len(coder_requests) == 3  # read_file, edit_file, report_task: nothing after the report
    assert len(run.model.requests) == 5  # the Architect's coder call and final answer, Coder's three
    assert run.model.remaining == 1
    report = run.ended("report_task")[0]
    coder_calls = [e for e in run.of("model.requested") if e.agent == "coder"]
    assert all(e.seq < report.seq for e in coder_calls)


def test_coder_result_lists_changed_files_with_revision_and_diff_stat(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        *fix_turns(),
        say("Fixed parse_date.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    fixed = (run.root / "dates.py").read_text()
    result = run.ended("coder")[0].payload
    assert "coder reported done:\nswapped month and day back" in result["output"]
    assert f"- dates.py revision {sha(fixed)} (+1 -1)" in result["output"]
    assert result["data"]["changes"] == [
        {"path": "dates.py", "revision": sha(fixed), "lines_added": 1, "lines_removed": 1}
    ]


def test_edit_file_reports_the_lines_of_the_new_text(tmp_path: Path) -> None:
    source = "def parse_date(year, month, day):\n" + BUGGY_LINE
    three_lines = "    y, m, d = int(year), int(month), int(day)\n    result = y, m, d\n    return result\n"
    turns = [
        call("coder", "architect", task="fix the return of parse_date"),
        call("edit_file", "coder", path="dates.py", old=BUGGY_LINE, new=three_lines, expected_revision=sha(source)),
        call("report_task", "coder", status="done", summary="return rebuilt over three lines"),
        say("Fixed.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files={**DATE_REPO, "dates.py": source})
    output = run.ended("edit_file")[0].payload["output"]
    assert output.startswith("edited dates.py lines 2-4;"), output
    assert "(+3 -1)" in run.ended("coder")[0].payload["output"]


def test_worker_requests_carry_the_task_record_once(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        *fix_turns(),
        say("Fixed parse_date.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns)
    for request in _requests(run.model.requests, "coder"):
        text = _text(request)
        assert text.count(f"objective: {OBJECTIVE}") == 1, text
        assert text.count("[task record]") == 1
        assert request.messages[0].content == "Assignment: fix the swapped month/day in dates.py"


def test_question_surface_receives_no_check_ids(tmp_path: Path) -> None:
    turns = [say("parse_date is in dates.py line 4", "architect")]
    run = run_workflow(tmp_path, "where is the date parser?", turns, surface="question")
    assert run.json["surface"] == "question"
    text = _text(run.model.requests[0])
    assert "[task record]" in text and "objective: where is the date parser?" in text
    assert "check_ids" not in text and "bootstrap_checks" not in text


def test_task_record_rendering_keeps_check_ids_by_default() -> None:
    record = TaskRecord("o", available_check_ids=("python-unittest",))
    assert 'available_check_ids: ["python-unittest"]' in record.render()
    assert "python-unittest" not in record.render(checks=False)


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "date-parser"


def test_bundled_example_happy_path_request_count_is_pinned(tmp_path: Path) -> None:
    files = {name: (EXAMPLE / name).read_text() for name in ("dates.py", "test_dates.py")}
    wrong = "    return int(year), int(day), int(month)\n"
    right = "    return int(year), int(month), int(day)\n"
    turns = [
        call("coder", "architect", task="fix the swapped month/day in dates.py"),
        call("read_file", "coder", path="dates.py"),
        call("edit_file", "coder", path="dates.py", old=wrong, new=right, expected_revision=sha(files["dates.py"])),
        call("report_task", "coder", status="done", summary="swapped month and day back"),
        say("Fixed parse_date; the unittest check passes.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=files)
    assert run.json["status"] == "completed" and run.json["verified"], run.json
    # Two Architect requests (delegate, final answer) and three Coder requests; no request
    # follows the Coder's report (one more went to Coder before reports ended its turn).
    assert [r.agent_role for r in run.model.requests] == ["architect", "coder", "coder", "coder", "architect"]
