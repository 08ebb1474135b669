"""Each run of a resumed session records its own evidence: its own checks and changes, never the
earlier runs' (the report, the recorded ``evidence.reported`` and ``read_report`` agree)."""

from __future__ import annotations

from pathlib import Path

from protoagent.api import read_report
from protoagent.events import Event

from .support import FIXED_LINE, call, fix_turns, say
from .test_deferral_later import OBJECTIVE, Session

LEAP_TEST = (
    "import unittest\n\nfrom dates import parse_date\n\n\nclass LeapTest(unittest.TestCase):\n"
    "    def test_leap_day(self):\n        self.assertEqual(parse_date('2024-02-29'), (2024, 2, 29))\n"
)


def _evidence(events: list[Event]) -> list[Event]:
    return [e for e in events if e.type == "evidence.reported"]


def test_a_resumed_sessions_second_run_reports_only_its_own_checks_and_changes(tmp_path: Path) -> None:
    session = Session(tmp_path)
    fix = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    first = session.send(OBJECTIVE, fix)
    assert FIXED_LINE in (session.root / "dates.py").read_text()
    assert [(c["phase"], c["outcome"]) for c in first.json["checks"]] == [("baseline", "failed"), ("verify", "passed")]
    add = [
        call("coder", "architect", task="add a leap-day test in test_leap.py"),
        call("create_file", "coder", path="test_leap.py", content=LEAP_TEST),
        call("report_task", "coder", status="done", summary="added the leap-day test"),
        say("added", "coder"),
        say("added the test", "architect"),
    ]
    second = session.send("add a leap-day test for parse_date", add)
    assert second.json["session_id"] == first.json["session_id"]
    [recorded_first, recorded_second] = [e.payload for e in _evidence(second.events)]
    second_start = second.of("run.contract")[-1].seq
    own_checks = [e.seq for e in second.ended("run_check") if e.seq > second_start]
    assert len(own_checks) == len(recorded_second["checks"]) == 2, "the second run's baseline and final check"
    assert [(c["phase"], c["outcome"]) for c in recorded_second["checks"]] == [
        ("baseline", "passed"),
        ("verify", "passed"),
    ], "the first run's failing baseline is not the second run's"
    assert recorded_second["changed_files"] == ["test_leap.py"], "dates.py was the first run's change"
    assert recorded_second["verified"] is True and recorded_second["verification"] == "verified"
    assert [(c["phase"], c["outcome"]) for c in recorded_first["checks"]] == [
        ("baseline", "failed"),
        ("verify", "passed"),
    ]
    assert recorded_first["changed_files"] == ["dates.py"]
    assert second.json["checks"] == recorded_second["checks"]
    assert second.json["changed_files"] == ["test_leap.py"]
    assert session.session_id is not None
    sdk = read_report(session.session_id, session.store)
    assert sdk["checks"] == recorded_second["checks"] and sdk["changed_files"] == ["test_leap.py"]
    asked = session.send("what does parse_date return?", [say("A (year, month, day) tuple.", "architect")])
    recorded_question = _evidence(asked.events)[-1].payload
    assert recorded_question["checks"] == [] and recorded_question["changed_files"] == []
    assert recorded_question["applied"] is False, "a question after an edit reports no change of its own"
