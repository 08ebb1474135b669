"""Source the harness shows a model is the source involved, and says where it stops."""

from __future__ import annotations

import json
from pathlib import Path

from tests.repair.test_call_resolution import RANGE_REPO

from protoagent.models.openai_compat import build_request
from protoagent.models.types import ModelRequest

from .support import call, run_workflow, say


def _shown(request: ModelRequest) -> str:
    """What an OpenAI-compatible endpoint would receive as the request's messages."""
    body = build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object")
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def test_architect_and_coder_are_shown_the_failing_classes_method_not_a_namesake(tmp_path: Path) -> None:
    turns = [
        call("coder", "architect", task="make Range include its upper bound"),
        say("I could not finish.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, "fix the failing Range test", turns, files=RANGE_REPO)
    architect = _shown(run.requests("architect")[0])
    assert "--- models.py lines 13-16 of 19" in architect  # Range.__call__
    assert "--- models.py lines 18-19 of 19" in architect  # Range._format_error
    assert "invalid URL" not in architect and "lines 5-6" not in architect
    coder = _shown(run.requests("coder")[0])
    assert "--- models.py lines 18-19 of 19" in coder and "invalid URL" not in coder


LONG_BLOCK = "def render(rows):\n" + "".join(f"    row_{i} = rows[{i}]\n" for i in range(30)) + "    return rows\n\n\n"
LONG_FILE = {"report.py": LONG_BLOCK + "def other():\n    return 1\n", "test_report.py": "def test_x():\n    pass\n"}


def test_a_forwarded_span_cut_inside_a_function_says_where_it_stops_and_where_the_function_ends(
    tmp_path: Path,
) -> None:
    turns = [
        call("read_file", "architect", path="report.py", start_line=1, end_line=20),
        call("tester", "architect", task="propose cases for render"),
        say("No cases needed.", "tester"),
        call("coder", "architect", task="make render return its rows"),
        say("Nothing done.", "coder"),
        say("Nothing to change.", "architect"),
    ]
    run = run_workflow(tmp_path, "explain how render handles rows and fix it", turns, files=LONG_FILE)
    tester, coder = _shown(run.requests("tester")[0]), _shown(run.requests("coder")[0])
    assert "--- report.py lines 1-20 of 36" in tester and "--- report.py lines 1-20 of 36" in coder
    cut = "[shown up to line 20; lines 21-36 are not shown; it stops inside def render (lines 1-32)"
    assert f"{cut}]" in tester  # Tester cannot edit: no advice about editing
    assert f"{cut}: read the rest before editing it]" in coder


def test_a_span_that_reaches_the_end_of_its_file_carries_no_continuation(tmp_path: Path) -> None:
    turns = [
        call("read_file", "architect", path="report.py", start_line=30, end_line=36),
        call("tester", "architect", task="propose cases for other"),
        say("No cases needed.", "tester"),
        say("Nothing to change.", "architect"),
    ]
    run = run_workflow(tmp_path, "explain other and fix it", turns, files=LONG_FILE)
    tester = _shown(run.requests("tester")[0])
    assert "--- report.py lines 30-36 of 36" in tester and "[shown up to line" not in tester


def test_a_worker_packet_cut_by_its_source_budget_says_where_it_stops(tmp_path: Path) -> None:
    big = "".join(f"VALUE_{i} = {i}  # a line of the module that fills the packet's budget\n" for i in range(200))
    files = {"big.py": big, "test_big.py": "def test_x():\n    pass\n"}
    turns = [
        call("worker_packet", "architect", role="coder", objective="rename the values", paths=["big.py"]),
        say("Prepared.", "architect"),
    ]
    lead = tmp_path / "home" / "agents" / "coding" / "architect.md"  # the person's own file adds the tool
    lead.parent.mkdir(parents=True)
    lead.write_text("---\ntools: [worker_packet]\n---\n")
    run = run_workflow(tmp_path, "rename the values", turns, files=files, surface="editing")
    (packet,) = run.ended("worker_packet")
    (source,) = json.loads(packet.payload["output"])["sources"]
    shown = source["content"].count("\n")
    assert source["content"].endswith("\n")  # whole lines only
    assert source["more"] == f"shown up to line {shown}; lines {shown + 1}-200 are not shown"
