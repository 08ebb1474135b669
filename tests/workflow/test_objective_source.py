"""The Architect's first request carries the source of the exact symbols its objective names
(one definition each, recorded as read), and nothing for a name that matches several definitions
or none (issue: cost of real work)."""

from __future__ import annotations

from pathlib import Path

from protoagent.workflow.objective_source import OBJECTIVE_SOURCE_HEADER, objective_symbols

from .support import call, run_workflow, say
from .test_cost_forwarding import FILES, _shown


def test_the_one_definition_an_objective_names_is_shown_first_and_reaches_the_coder(tmp_path: Path) -> None:
    files = {**FILES, "other.py": "def render(rows):\n    return rows\n"}  # render: two definitions
    turns = [
        call("coder", "architect", task="make count in app.py return len(rows)"),
        say("Nothing to do.", "coder"),
        say("Stopped.", "architect"),
    ]
    objective = "count() returns one too many and render() is fine; fix `count` and check missing_name()"
    run = run_workflow(tmp_path, objective, turns, files=files)
    first = _shown(run.requests("architect")[0])
    assert first.count(OBJECTIVE_SOURCE_HEADER) == 1
    assert "--- app.py lines 9-10 of 10" in first and "  10|     return len(rows) + 1" in first
    assert "def render" not in first and "missing_name" not in first.split(OBJECTIVE_SOURCE_HEADER)[1]
    (localized,) = [e for e in run.of("source.localized") if e.agent == "architect"]
    assert [(s["path"], s["start_line"]) for s in localized.payload["spans"]] == [("app.py", 9)]
    assert "--- app.py lines 9-10 of 10" in _shown(run.requests("coder")[0])  # read by the lead: forwarded


def test_names_written_as_code_are_the_objectives_symbols() -> None:
    text = "Signal.send() and `muted` in dates.py, e.g. parse_date; f(1) and plain words stay out"
    assert objective_symbols(text) == ["Signal.send", "muted", "parse_date"]


def test_a_method_called_on_a_calls_result_is_shown_and_a_class_too_long_to_show_whole_is_not(
    tmp_path: Path,
) -> None:
    methods = "".join(f"    def m{n}(self):\n        return {n}\n\n" for n in range(40))  # 120 lines
    names = 'class HumanName:\n    """A name."""\n\n' + methods + "    def initials(self):\n        return ''\n"
    assert objective_symbols("HumanName('Van J').initials() returns '. J.'") == ["HumanName", "initials"]
    turns = [say("Stopped.", "architect")]
    run = run_workflow(
        tmp_path,
        "HumanName('Van J').initials() returns '. J.' instead of 'V. J.'",
        turns,
        files={**FILES, "names.py": names},
    )
    first = _shown(run.requests("architect")[0]).split(OBJECTIVE_SOURCE_HEADER)[1]
    assert "--- names.py lines 124-125 of 125" in first and "def initials(self):" in first
    assert "class HumanName" not in first  # 125 lines: its head would be all the lead saw of it
