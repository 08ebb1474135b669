"""No repair is opened for a failure the change did not cause: what failed before the change is
read from the baseline measured before the run's first edit, never from a later "baseline"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .support import call, run_workflow, say, sha

SOURCE = "def slug(text):\n    return text.replace(' ', '-')\n"
TESTS = (
    "from text import slug\n\n\n"
    "def test_slug_lowercases():\n    assert slug('A B') == 'a-b'\n\n\n"
    "def test_legacy():\n    assert slug('x') == 'legacy'\n"
)
FILES = {"text.py": SOURCE, "test_text.py": TESTS}
OBJECTIVE = "fix the failing test for slug"
EDIT = {"path": "text.py", "old": "return text.replace", "new": "return text.lower().replace"}


def _fix(*after: dict[str, Any]) -> list[dict[str, Any]]:
    """Coder fixes the target test; the Architect then makes the calls ``after``; every later
    Architect turn would decline a repair."""
    return [
        call("coder", "architect", task="lowercase the slug"),
        call("edit_file", "coder", **EDIT, expected_revision=sha(SOURCE)),
        call("report_task", "coder", status="done", summary="slug lowercases"),
        *after,
        *[say("I decline to change test_legacy.", "architect")] * 3,
    ]


def _assert_no_repair(run: Any) -> None:
    assert not [e for e in run.of("workflow.phase") if e.payload["phase"] == "repair"]
    assert not [e for e in run.of("context.injected") if "Repair:" in str(e.payload.get("text", ""))]
    verify = [c for c in run.json["checks"] if c["phase"] == "verify"][-1]
    assert verify["failed_tests"] == verify["preexisting_failures"] == ["test_text.py::test_legacy"]
    note = next(n for n in run.json["notes"] if "failed before the change too" in n)
    assert "test_legacy" in note and "every other test it ran passes" in note
    assert not any("the change did not fix them" in n for n in run.json["notes"])


def test_a_failure_that_also_failed_at_baseline_opens_no_repair_once_the_target_test_passes(tmp_path: Path) -> None:
    verify = call("run_check", "architect", check_id="pytest", phase="verify")
    run = run_workflow(tmp_path, OBJECTIVE, _fix(verify), files=FILES)
    _assert_no_repair(run)
    assert len(run.requests("architect")) == 2  # the coder call and the verify: no repair request


def test_a_baseline_rerun_after_the_edit_does_not_hide_what_failed_before_the_change(tmp_path: Path) -> None:
    rerun = call("run_check", "architect", check_id="pytest", phase="baseline")
    verify = call("run_check", "architect", check_id="pytest", phase="verify")
    run = run_workflow(tmp_path, OBJECTIVE, _fix(rerun, verify), files=FILES)
    _assert_no_repair(run)
    assert len(run.requests("architect")) == 3
