"""What check receipts tell inside a run: a failing baseline is labelled failing (once, with its
failing tests) in the text the Architect receives, and a check that changes tracked files is
noticed through revision capture and reported, never counted as the agent's edit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .support import DATE_REPO, call, fix_turns, run_workflow, say

OBJECTIVE = "fix the failing date parser test"
FAILING_TEST = "test_dates.ParseDateTest.test_parses_year_month_day"


def test_a_failing_baseline_is_labelled_failing_and_told_to_the_architect_once(tmp_path: Path) -> None:
    run = run_workflow(tmp_path, OBJECTIVE, [say("I will look at it.", "architect")])
    baseline = run.ended("run_check")[0].payload
    assert baseline["status"] == "ok" and baseline["data"]["outcome"] == "failed"
    assert baseline["output"].startswith("check unittest baseline: failed (exit 1, 1 tests)")
    messages = run.model.requests[0].messages
    context = next(m.content for m in messages if "Baseline before any change" in str(m.content))
    assert "error: check" not in context and "(error)" not in context
    assert context.count("check unittest baseline") == 1
    assert context.count("failed") >= 1 and f"failing tests: {FAILING_TEST}" in context
    header = context.splitlines()[1]
    assert header == "check unittest baseline: failed (exit 1, 1 tests)"


def test_a_long_baseline_output_keeps_its_header_and_failing_tests_in_the_architects_text(tmp_path: Path) -> None:
    noisy = DATE_REPO["test_dates.py"].replace(
        "    def test_parses_year_month_day(self):",
        "    def test_parses_year_month_day(self):\n        print('x' * 6000)",
    )
    files = {**DATE_REPO, "test_dates.py": noisy}
    run = run_workflow(tmp_path, OBJECTIVE, [say("I will look at it.", "architect")], files=files)
    context = next(m.content for m in run.model.requests[0].messages if "Baseline before" in str(m.content))
    lines = context.splitlines()
    assert lines[1].startswith("check unittest baseline: failed")
    assert lines[2] == f"failing tests: {FAILING_TEST}"
    assert "characters of output cut" in context and len(context) < 2500


BUILD = """from pathlib import Path

readme = Path("README.md")
readme.write_text(readme.read_text() + "built\\n")
"""


def test_a_check_that_rewrites_a_tracked_file_is_reported_and_not_counted_as_an_edit(tmp_path: Path) -> None:
    config = {
        "checks": [
            {"id": "unittest", "argv": [sys.executable, "-m", "unittest", "-q"], "paths": ["dates.py"]},
            {"id": "build", "argv": [sys.executable, "build.py"], "paths": ["build.py"]},
        ]
    }
    files = {
        **DATE_REPO,
        "README.md": "# dates\n",
        "build.py": BUILD,
        ".protoagent/project.json": json.dumps(config),
    }
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    run = run_workflow(tmp_path, OBJECTIVE, turns, files=files)
    changed = [(e.payload["check_id"], e.payload["phase"], e.payload["files"]) for e in run.of("check.changed_files")]
    assert changed == [("build", "baseline", ["README.md"]), ("build", "verify", ["README.md"])]
    assert (run.root / "README.md").read_text() == "# dates\nbuilt\nbuilt\n"
    build = [e.payload for e in run.ended("run_check") if e.payload["data"]["check_id"] == "build"][-1]
    assert "changed tracked files: README.md" in build["output"]
    report = run.json
    assert report["changed_files"] == ["dates.py"], "the check's change is not the agent's edit"
    assert any(n.startswith("check 'build' (verify) changed tracked files: README.md") for n in report["notes"])
    assert [c.get("changed_tracked_files") for c in report["checks"] if c["id"] == "build"] == [
        ["README.md"],
        ["README.md"],
    ]
    unittest_checks = [c for c in report["checks"] if c["id"] == "unittest"]
    assert all("changed_tracked_files" not in c for c in unittest_checks)
    assert report["verified"] is True and report["status"] == "completed"
