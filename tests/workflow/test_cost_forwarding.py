"""Cost of delegation: an assignment carries only the source it names, and a three-span edit of one
file costs the Coder one request (issue: cost of real work)."""

from __future__ import annotations

import json
from pathlib import Path

from protoagent.checks.types import CheckPlan
from protoagent.models.openai_compat import build_request
from protoagent.models.types import ModelRequest
from protoagent.workflow.named_files import NAMED_FILES_HEADER, TEST_MODULE_HEADER
from protoagent.workflow.source_spans import SourceSpan, render_together
from protoagent.workflow.span_choice import focused_on, named_spans
from protoagent.workflow.test_files import ranked_test_files

from .support import call, run_workflow, say, sha

APP = (
    "def parse(text):\n"
    "    return text.split(',')\n"
    "\n"
    "\n"
    "def render(rows):\n"
    "    return ';'.join(rows)\n"
    "\n"
    "\n"
    "def count(rows):\n"
    "    return len(rows) + 1\n"
)
UTIL = "def helper(value):\n    return value * 2\n"
TESTS = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n"
FILES = {"app.py": APP, "util.py": UTIL, "test_app.py": TESTS}
THREE_TEST_MODULES = {**FILES, "tests/__init__.py": "", "tests/test_render.py": TESTS, "tests/test_count.py": TESTS}
OBJECTIVE = "fix count in app.py"
MAX_THREE_SPAN_CODER_BYTES = 3_600
"""The three-span edit's one Coder request body, compact JSON: 3,562 bytes under the declaration
rule (Coder's declarations were 66 bytes longer before it)."""


def _shown(request: ModelRequest) -> str:
    body = build_request(request, "m", max_tokens_field="max_tokens", json_format="json_object")
    return "\n".join(str(m.get("content") or "") for m in body["messages"])


def _tester_then_coder(tester: str, coder: str) -> dict[str, object]:
    """One lead reply that calls tester, then coder: Coder runs in the Tester's turn."""
    calls = [{"name": "tester", "arguments": {"task": tester}}, {"name": "coder", "arguments": {"task": coder}}]
    return {"role": "architect", "tool_calls": calls}


def _three_reads() -> list[dict[str, object]]:
    return [
        call("read_file", "architect", path="app.py", start_line=1, end_line=2),
        call("read_file", "architect", path="util.py"),
        call("read_file", "architect", path="app.py", start_line=9, end_line=10),
    ]


def test_a_coder_assignment_carries_only_the_span_it_names_of_three_the_lead_read(tmp_path: Path) -> None:
    turns = [
        *_three_reads(),
        call("coder", "architect", task="count returns one too many; make it return len(rows)"),
        say("Nothing to do.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=FILES)
    coder = _shown(run.requests("coder")[0])
    assert "--- app.py lines 9-10 of 10" in coder
    assert "--- app.py lines 1-2" not in coder and "def parse" not in coder
    assert "util.py" not in coder and "def helper" not in coder


def test_an_assignment_naming_a_file_carries_that_files_spans_and_no_other(tmp_path: Path) -> None:
    turns = [
        *_three_reads(),
        call("coder", "architect", task="double the value in util.py"),
        say("Nothing to do.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, "change util.py", turns, files=FILES)
    coder = _shown(run.requests("coder")[0])
    assert "--- util.py lines 1-2 of 2" in coder
    assert "--- app.py" not in coder


def test_an_assignment_that_names_none_of_the_read_spans_carries_them_all(tmp_path: Path) -> None:
    turns = [
        *_three_reads(),
        call("tester", "architect", task="propose regression cases for the bug"),
        say("No cases.", "tester"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=FILES)
    tester = _shown(run.requests("tester")[0])
    for shown in ("--- app.py lines 1-2 of 10", "--- util.py lines 1-2 of 2", "--- app.py lines 9-10 of 10"):
        assert shown in tester


def test_a_three_span_edit_of_one_file_costs_one_coder_request(tmp_path: Path) -> None:
    edits = [
        {"old": "    return text.split(',')\n", "new": "    return text.split(';')\n"},
        {"old": "    return ';'.join(rows)\n", "new": "    return ','.join(rows)\n"},
        {"old": "    return len(rows) + 1\n", "new": "    return len(rows)\n"},
    ]
    turns = [
        call("read_file", "architect", path="app.py"),
        call("coder", "architect", task="in app.py swap the separators of parse and render; count returns len(rows)"),
        {
            "role": "coder",
            "tool_calls": [
                {"name": "edit_file", "arguments": {"path": "app.py", "edits": edits, "expected_revision": sha(APP)}},
                {"name": "report_task", "arguments": {"status": "done", "summary": "three spans changed"}},
            ],
        },
        call("run_check", "architect", check_id="unittest", phase="verify"),
    ]
    run = run_workflow(tmp_path, "swap the separators in app.py and fix count", turns, files=FILES)
    assert len(run.requests("coder")) == 1
    (coder,) = run.requests("coder")
    body = build_request(coder, "m", max_tokens_field="max_tokens", json_format="json_object")
    size = len(json.dumps(body, separators=(",", ":")))
    assert size <= MAX_THREE_SPAN_CODER_BYTES, size
    assert "--- app.py lines 1-10 of 10" in _shown(run.requests("coder")[0])  # no read_file needed first
    written = (run.root / "app.py").read_text()
    assert "split(';')" in written and "','.join" in written and "return len(rows)\n" in written
    (edit,) = run.ended("edit_file")
    assert edit.payload["status"] == "ok"
    assert run.json["applied"] is True and run.json["verified"] is True
    assert run.model.remaining == 0


def test_a_definition_the_lead_looked_up_is_handed_to_the_coder_who_edits_it_without_a_read(tmp_path: Path) -> None:
    turns = [
        call("code_context", "architect", symbol="count", operation="definition"),
        call("coder", "architect", task="count returns one too many; make it return len(rows)"),
        {
            "role": "coder",
            "tool_calls": [
                {
                    "name": "edit_file",
                    "arguments": {
                        "path": "app.py",
                        "old": "    return len(rows) + 1\n",
                        "new": "    return len(rows)\n",
                        "expected_revision": sha(APP),
                    },
                },
                {"name": "report_task", "arguments": {"status": "done", "summary": "count fixed"}},
            ],
        },
        call("run_check", "architect", check_id="unittest", phase="verify"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=FILES)
    (coder,) = run.requests("coder")
    shown = _shown(coder)
    assert "--- app.py lines 9-10 of 10" in shown and "return len(rows) + 1" in shown
    assert "def parse" not in shown
    (edit,) = run.ended("edit_file")
    assert edit.payload["status"] == "ok"
    assert (run.root / "app.py").read_text().endswith("    return len(rows)\n")
    assert run.model.remaining == 0


def test_a_coder_called_in_the_testers_turn_gets_its_cases_and_a_later_one_does_not(tmp_path: Path) -> None:
    cases = "Case: count([]) is 0; case: count(['a']) is 1."
    same_turn = _tester_then_coder(
        "propose cases for count in app.py", "count in app.py returns len(rows); add the Tester's cases"
    )
    turns = [
        same_turn,
        say(cases, "tester"),
        say("Nothing to do.", "coder"),
        call("coder", "architect", task="count in app.py: check again"),
        say("Nothing to do.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=FILES)
    first, second = run.requests("coder")[0], run.requests("coder")[-1]
    assert "What the Tester wrote" in _shown(first) and _shown(first).count("count([]) is 0") == 1
    assert _shown(first).index("What the Tester wrote") < _shown(first).index("--- app.py")  # cases before source
    assert "without a report" not in _shown(first)
    assert "What the Tester wrote" not in _shown(second)
    architect = _shown(run.requests("architect")[1])
    assert "count([]) is 0" in architect  # the lead still gets the advice as the tool result


def test_what_the_tester_read_reaches_the_coder_without_a_read(tmp_path: Path) -> None:
    turns = [
        call("tester", "architect", task="propose cases for count in app.py"),
        call("read_file", "tester", path="test_app.py"),
        call("report_task", "tester", status="done", summary="add a case to test_app.py"),
        say("done", "tester"),
        call("coder", "architect", task="add a count case to test_app.py"),
        say("Nothing to do.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=FILES)
    coder = _shown(run.requests("coder")[0])
    assert "Source already read in this task" in coder and "--- test_app.py lines 1-6 of 6" in coder


def test_a_file_the_testers_same_turn_advice_names_reaches_the_coder_with_what_the_tester_read(
    tmp_path: Path,
) -> None:
    same_turn = _tester_then_coder(
        "propose cases for count in app.py", "fix count in app.py and add the Tester's cases"
    )
    turns = [
        call("read_file", "architect", path="app.py"),
        same_turn,
        call("read_file", "tester", path="test_app.py"),
        say("Add test_count to class T in test_app.py: count(['a']) == 1.", "tester"),
        say("Nothing to do.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=FILES)
    coder = _shown(run.requests("coder")[0])
    assert "--- test_app.py lines 1-6 of 6" in coder  # the task never names it; the advice does


def test_a_file_is_named_by_its_path_its_name_or_a_path_ending_in_it_but_not_by_a_longer_name() -> None:
    span = SourceSpan("src/pkg/util.py", 1, 2, 2, "r", UTIL)
    other = SourceSpan("src/pkg/app.py", 1, 2, 10, "r", APP)
    for text in ("edit src/pkg/util.py", "edit util.py.", "edit pkg/util.py now"):
        assert named_spans([span, other], text) == [span], text
    assert named_spans([span, other], "edit myutil.py and util.pyc") == [span, other]  # names neither: both


def test_an_assignment_naming_a_line_of_a_named_file_carries_that_span_beside_the_symbol_it_names() -> None:
    first = SourceSpan("pkg/enc.py", 49, 50, 54, "r", "def int_to_bytes(num):\n    return pack(num).rstrip(b'0')\n")
    second = SourceSpan("pkg/enc.py", 53, 54, 54, "r", "def bytes_to_int(data):\n    return unpack(data.ljust(8))\n")
    task = "In pkg/enc.py: line 50 _int_to_bytes(num).rstrip -> lstrip; bytes_to_int: ljust -> rjust"
    assert named_spans([first, second], task) == [first, second]
    assert named_spans([first, second], "In pkg/enc.py bytes_to_int: ljust -> rjust") == [second]
    assert named_spans([first, second], "line 50 of other.py") == [first, second]  # names neither: both


def test_spans_shown_together_never_call_a_shown_line_not_shown() -> None:
    first = SourceSpan("pkg/enc.py", 49, 50, 54, "r", "a\nb\n")
    second = SourceSpan("pkg/enc.py", 53, 54, 54, "r", "c\nd\n")
    shown = render_together([first, second])
    assert "[shown up to line 50; lines 51-52 are not shown]" in shown
    assert "lines 51-54" not in shown
    assert "[shown up to line 50; lines 51-54 are not shown]" in render_together([first])


def test_a_read_cut_to_the_budget_keeps_the_definition_the_assignment_names() -> None:
    body = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(60))
    span = SourceSpan("mod.py", 1, 240, 240, "r", body)
    focused = focused_on(span, "in mod.py make f50 return x - 50")
    assert focused.start_line == 201 and focused.content.startswith("def f50(x):")
    assert focused_on(span, "in mod.py make f0 return x") == span  # already first: whole span
    assert focused_on(span, "rename g") == span  # points at none of its lines
    assert focused_on(span, "in mod.py, line 121: return x - 30").start_line == 121


def test_a_named_line_wins_over_a_named_symbol_and_brings_the_definition_that_holds_it() -> None:
    body = "def memoize(f):\n    return f\n\n\n" + "".join(
        f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(1, 60)
    )
    span = SourceSpan("calc.py", 1, 240, 240, "r", body)
    focused = focused_on(span, "in calc.py memoize drops kwargs from the key: fix lines 122 and 162")
    assert focused.start_line == 121 and focused.content.startswith("def f30(x):")
    assert focused_on(span, "calc.py lines 7, 122").start_line == 5  # the first of a list, in def f1
    assert focused_on(span, "in calc.py's f30 (L122-123)").start_line == 121
    assert focused_on(span, "see calc.py:162 for the key").start_line == 161


def test_a_tester_assignment_names_the_test_modules_the_checks_run_those_sharing_its_words_first(
    tmp_path: Path,
) -> None:
    turns = [
        call("tester", "architect", task="propose cases for count in app.py"),
        say("count should return len(rows).", "tester"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=THREE_TEST_MODULES)
    tester = _shown(run.requests("tester")[0])
    line = next(line for line in tester.splitlines() if line.startswith("Test modules the checks run"))
    assert line.startswith("Test modules the checks run (3): ")
    named = line.split(": ", 1)[1].rstrip(".").split(", ")
    assert set(named[:2]) == {"test_app.py", "tests/test_count.py"} and named[2] == "tests/test_render.py"
    assert line in _shown(run.requests("architect")[0])  # a passing baseline: the lead is told too


def test_a_tester_packet_holds_more_of_what_the_lead_read_than_a_coder_assignment(tmp_path: Path) -> None:
    module = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(60))  # 240 lines
    tests = "".join(f"def test_f{i}():\n    assert True\n\n\n" for i in range(25))  # 100 lines
    files = {"mod.py": module, "test_mod.py": tests}
    task = "cases for a new f60 in mod.py, next to the others in test_mod.py"
    turns = [
        call("read_file", "architect", path="mod.py"),
        call("read_file", "architect", path="test_mod.py"),
        {"role": "architect", "tool_calls": [{"name": "tester", "arguments": {"task": task}}]},
        say("f60(1) == 61.", "tester"),
        {"role": "architect", "tool_calls": [{"name": "coder", "arguments": {"task": "add f60 " + task[9:]}}]},
        say("Nothing done.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, "add f60", turns, files=files)
    tester, coder = _shown(run.requests("tester")[0]), _shown(run.requests("coder")[0])
    assert "--- mod.py lines 1-240 of 240" in tester and "--- test_mod.py lines 1-100 of 100" in tester
    assert "--- mod.py lines" in coder and "--- mod.py lines 1-240 of 240" not in coder  # 300 lines for Coder


def test_a_tester_gets_the_unread_test_module_most_like_its_assignment_and_it_counts_as_read(tmp_path: Path) -> None:
    turns = [
        call("tester", "architect", task="propose cases for render"),
        say("render(['a', 'b']) should be 'a;b'.", "tester"),
        call("coder", "architect", task="add the render cases to tests/test_render.py"),
        say("Nothing to do.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=THREE_TEST_MODULES)
    tester, coder = _shown(run.requests("tester")[0]), _shown(run.requests("coder")[0])
    assert TEST_MODULE_HEADER in tester and "--- tests/test_render.py lines 1-6 of 6" in tester
    assert "--- tests/test_count.py" not in tester
    assert [e.agent for e in run.of("source.localized") if e.agent == "tester"] == ["tester"]
    assert "--- tests/test_render.py lines 1-6 of 6" in coder and NAMED_FILES_HEADER not in coder  # read already


def test_overlapping_reads_reach_a_worker_without_a_line_shown_twice(tmp_path: Path) -> None:
    long_app = "".join(f"def f{n}(x):\n    return x + {n}\n\n\n" for n in range(5))  # 20 lines
    turns = [
        call("read_file", "architect", path="app.py", start_line=1, end_line=10),
        call("read_file", "architect", path="app.py", start_line=6, end_line=15),
        call("coder", "architect", task="in app.py make every function return its argument"),
        say("Nothing to do.", "coder"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, "fix f2 in app.py", turns, files={**FILES, "app.py": long_app})
    coder = _shown(run.requests("coder")[0])
    assert "--- app.py lines 6-15 of 20" in coder and "--- app.py lines 1-5 of 20" in coder
    assert coder.count("   6| ") == 1 and coder.count("  10| ") == 1


def test_a_tester_gets_the_test_module_its_assignment_names_over_one_sharing_more_words(tmp_path: Path) -> None:
    turns = [
        call("tester", "architect", task="propose render cases; they belong in tests/test_count.py"),
        say("render(['a']) should be 'a'.", "tester"),
        say("Stopped.", "architect"),
    ]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=THREE_TEST_MODULES)
    tester = _shown(run.requests("tester")[0])
    assert TEST_MODULE_HEADER in tester and "--- tests/test_count.py lines 1-6 of 6" in tester
    assert "--- tests/test_render.py" not in tester


def test_a_test_module_shares_a_word_with_the_objective_in_the_singular_or_the_plural() -> None:
    modules = tuple(f"tests/test_{n}.py" for n in ("api", "builder", "iri", "misc", "parse", "uri", "unicode", "ref"))
    plan = CheckPlan(checks=(), dependency_files=(*modules, "tests/test_validators.py"))
    assert ranked_test_files(plan, "rfc3986's Validator treats the valid port 65535 as out of range")[0] == (
        "tests/test_validators.py"
    )
