"""run_check through the real tool pipeline: frozen commands, approval, real subprocesses and the
receipts the workflow's evidence rules read."""

from __future__ import annotations

import asyncio
import hashlib
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from protoagent.checks import CheckPlan, CheckSpec, discover_checks
from protoagent.checks.run_check import CHECK_TOOLS, RunCheck
from protoagent.events import MemoryStore, SessionLog
from protoagent.events.types import Event
from protoagent.models.types import ToolCall
from protoagent.processes import CommandRequest, CommandSite, prepare_command
from protoagent.tools.approvals import ApprovalService, Policy
from protoagent.tools.pipeline import ToolEnvironment, ToolPipeline
from protoagent.tools.registry import ToolRegistry
from protoagent.tools.services import RunServices
from protoagent.workflow.evidence import check_results, dependencies_current

from .support import PYTHON, write_repo

CALC = "def add(a, b):\n    return a + b\n"
PASSING = (
    "import unittest\n\nfrom calc import add\n\n\nclass AddTest(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(add(1, 2), 3)\n\n"
    "    def test_zero(self):\n        self.assertEqual(add(0, 0), 0)\n"
)
FAILING = PASSING.replace("add(1, 2), 3", "add(1, 2), 4")
RECEIPT_KEYS = {
    "check_id",
    "phase",
    "outcome",
    "exit_code",
    "tests_run",
    "dependency_revisions",
    "argv",
    "cwd",
    "duration_s",
    "artifact",
    "unavailable_reason",
    "failed_tests",
    "changed_tracked_files",
}


class Harness:
    """A pipeline offering only run_check, with its log and artifacts folder."""

    def __init__(
        self,
        root: Path,
        plan: CheckPlan,
        *,
        policy: Policy = "auto",
        tool: RunCheck | None = None,
        changed: Callable[[], Iterable[str]] | None = None,
    ) -> None:
        self.root = root
        self.artifacts = root.parent / "artifacts"
        self.log = SessionLog(MemoryStore(), "s")
        self.log.append(
            "session.created",
            {"preset": "t", "model": "scripted", "root": str(root), "approval_policy": policy},
        )
        services = RunServices(checks=plan, python=sys.executable, changed_files=changed)
        env = ToolEnvironment(root, self.artifacts, services=services)
        registry = ToolRegistry([tool or RunCheck()])
        self.pipeline = ToolPipeline(registry, ApprovalService(policy), self.log, env)
        self._ids = 0

    def run(self, check_id: str, phase: str = "verify") -> dict[str, Any]:
        """Run one call and return its ``tool.ended`` payload."""
        self._ids += 1
        call = ToolCall(f"c{self._ids}", "run_check", {"check_id": check_id, "phase": phase})
        asyncio.run(self.pipeline.run(call))
        return self.ended().payload

    def ended(self) -> Event:
        event = self.log.last("tool.ended")
        assert event is not None
        return event

    def types(self) -> list[str]:
        return [event.type for event in self.log.events]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    return path.resolve()


def unittest_repo(root: Path, test_text: str = PASSING) -> CheckPlan:
    write_repo(root, {"calc.py": CALC, "test_calc.py": test_text})
    plan = discover_checks(root, python=PYTHON)
    assert plan.check_ids == ("unittest",)
    return plan


def single(check: CheckSpec) -> CheckPlan:
    return CheckPlan(checks=(check,))


def test_check_tools_export_run_check() -> None:
    assert [cls.name for cls in CHECK_TOOLS] == ["run_check"]
    assert RunCheck.metadata.effect == "execute"
    assert RunCheck.metadata.presentation == "terminal"


def test_unknown_id_is_rejected_with_available_check_ids(root: Path) -> None:
    harness = Harness(root, unittest_repo(root))
    ended = harness.run("tests")
    assert ended["status"] == "rejected"
    assert ended["data"] == {"kind": "unknown_check_id", "available_check_ids": ["unittest"]}
    assert "approval.requested" not in harness.types()
    assert check_results(harness.log.events) == []


def test_expands_to_the_exact_frozen_argv(root: Path) -> None:
    write_repo(root, {"calc.py": CALC, "test_calc.py": PASSING})
    argv = ("python", "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py", "-q")
    harness = Harness(root, single(CheckSpec("unit", argv, env={"PYTHONHASHSEED": "0"})))
    ended = harness.run("unit")
    requested = next(e for e in harness.log.events if e.type == "approval.requested")
    site = CommandSite(root, harness.artifacts / "home", sys.executable)
    expected = prepare_command(CommandRequest(argv, ".", {"PYTHONHASHSEED": "0"}, 300.0, 8192), site)
    preview = requested.payload["preview"]
    assert preview.endswith(expected.preview())
    assert f"executable: {sys.executable}" in preview.splitlines()
    assert "sandbox: none" in preview.splitlines()
    assert requested.payload["effect"] == "execute"
    assert ended["data"]["argv"] == list(expected.argv)
    assert ended["data"]["argv"][0] == sys.executable
    assert ended["data"]["cwd"] == str(root)


def test_passing_unittest_suite_passes_with_tests_run(root: Path) -> None:
    harness = Harness(root, unittest_repo(root))
    ended = harness.run("unittest")
    data = ended["data"]
    assert set(data) == RECEIPT_KEYS
    assert ended["status"] == "ok"
    assert (data["outcome"], data["exit_code"], data["tests_run"], data["phase"]) == ("passed", 0, 2, "verify")
    assert ended["output"].startswith("check unittest verify: passed (exit 0, 2 tests)")
    assert "Ran 2 tests" in ended["output"]
    assert data["unavailable_reason"] is None
    assert ended["artifact"] == data["artifact"]
    assert "Ran 2 tests" in Path(data["artifact"]).read_text()
    assert [(r.id, r.outcome, r.tests_run) for r in check_results(harness.log.events)] == [("unittest", "passed", 2)]


def test_passing_pytest_suite_passes_with_tests_run(root: Path) -> None:
    write_repo(root, {"test_sum.py": "def test_one():\n    assert 1 + 1 == 2\n\n\ndef test_two():\n    pass\n"})
    check = CheckSpec("pytest", (PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider"))
    data = Harness(root, single(check)).run("pytest")["data"]
    assert (data["outcome"], data["tests_run"]) == ("passed", 2)


def test_failing_suite_fails(root: Path) -> None:
    harness = Harness(root, unittest_repo(root, FAILING))
    ended = harness.run("unittest", "baseline")
    assert ended["status"] == "ok", "a check that ran to a verdict is a completed call, labelled by its outcome"
    assert ended["output"].startswith("check unittest baseline: failed")
    assert (ended["data"]["outcome"], ended["data"]["exit_code"], ended["data"]["tests_run"]) == ("failed", 1, 2)
    assert ended["data"]["phase"] == "baseline"
    assert "AssertionError" in ended["output"]


@pytest.mark.parametrize(
    "argv",
    [
        (PYTHON, "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py", "-q"),
        (PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
    ],
)
def test_zero_tests_fail_and_never_pass(root: Path, argv: tuple[str, ...]) -> None:
    write_repo(root, {"calc.py": CALC})
    ended = Harness(root, single(CheckSpec("empty", argv))).run("empty")
    assert ended["status"] == "ok"
    assert (ended["data"]["outcome"], ended["data"]["tests_run"]) == ("failed", 0)
    assert "zero tests never verify a code change" in ended["output"]


@pytest.mark.parametrize(
    ("argv", "missing"),
    [((PYTHON, "-S", "-m", "pytest", "-q"), "pytest"), ((PYTHON, "-m", "no_such_runner_xyz"), "no_such_runner_xyz")],
    ids=["pytest-missing", "runner-missing"],
)
def test_missing_runner_is_unavailable(root: Path, argv: tuple[str, ...], missing: str) -> None:
    write_repo(root, {"calc.py": CALC, "test_calc.py": PASSING})
    ended = Harness(root, single(CheckSpec("runner", argv))).run("runner")
    data = ended["data"]
    assert ended["status"] == "error"
    assert data["outcome"] == "unavailable"
    assert data["exit_code"] != 0
    assert f"No module named {missing}" in ended["output"]
    assert repr(missing) in data["unavailable_reason"]


def test_missing_external_module_is_unavailable(root: Path) -> None:
    harness = Harness(root, unittest_repo(root, "import no_such_dependency_xyz\n" + PASSING))
    data = harness.run("unittest")["data"]
    assert data["outcome"] == "unavailable"
    assert "no_such_dependency_xyz" in data["unavailable_reason"]


def test_projects_own_missing_module_fails_not_unavailable(root: Path) -> None:
    # The package lives under src/ but the root discovery command does not put src on sys.path:
    # an import-path problem the Coder can repair, not a missing dependency.
    write_repo(root, {"src/calc/__init__.py": CALC, "test_calc.py": PASSING})
    check = CheckSpec("unittest", (PYTHON, "-m", "unittest", "discover", "-s", ".", "-p", "test_*.py", "-q"))
    ended = Harness(root, single(check)).run("unittest")
    assert "No module named 'calc'" in ended["output"]
    assert ended["data"]["outcome"] == "failed"
    assert ended["data"]["unavailable_reason"] is None


def test_runner_unavailable_check_never_executes(root: Path) -> None:
    marker = root / "ran.txt"
    script = root / "runner.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    reason = "'cargo' was not found on the fixed search path; install it or configure the check"
    check = CheckSpec("cargo-test", (str(script),), runner_unavailable=reason)
    harness = Harness(root, single(check))
    ended = harness.run("cargo-test")
    assert "approval.requested" not in harness.types()
    assert not marker.exists()
    assert ended["status"] == "error"
    data = ended["data"]
    assert (data["outcome"], data["unavailable_reason"], data["exit_code"], data["artifact"]) == (
        "unavailable",
        reason,
        None,
        None,
    )
    assert [r.outcome for r in check_results(harness.log.events)] == ["unavailable"]


def test_missing_configured_executable_is_unavailable_without_running(root: Path) -> None:
    write_repo(root, {"calc.py": CALC})
    harness = Harness(root, single(CheckSpec("regression", (".venv/bin/python", "-m", "pytest"), source="config")))
    ended = harness.run("regression")
    assert "approval.requested" not in harness.types()
    assert ended["data"]["outcome"] == "unavailable"
    assert ".venv/bin/python" in ended["data"]["unavailable_reason"]


def test_empty_bootstrap_baseline_is_rejected_before_approval(root: Path) -> None:
    write_repo(root, {"calc.py": CALC})
    plan = discover_checks(root, python=PYTHON)
    assert plan.bootstrap_checks == ("python-tests",)
    harness = Harness(root, plan)
    ended = harness.run("python-tests", "baseline")
    assert ended["status"] == "rejected"
    assert ended["data"]["kind"] == "empty_bootstrap_baseline"
    assert "approval.requested" not in harness.types()
    assert not (harness.artifacts / "processes").exists()
    assert check_results(harness.log.events) == []
    (root / "test_calc.py").write_text(PASSING)
    data = harness.run("python-tests", "baseline")["data"]
    assert (data["outcome"], data["tests_run"]) == ("passed", 2)
    assert "test_calc.py" in data["dependency_revisions"]


def test_dependency_revisions_are_recorded_and_change_after_an_edit(root: Path) -> None:
    plan = unittest_repo(root)
    harness = Harness(root, plan, changed=lambda: ["calc.py", str(root / "calc.py"), "gone.py"])
    first = harness.run("unittest")["data"]["dependency_revisions"]
    digest = hashlib.sha256((root / "calc.py").read_bytes()).hexdigest()
    assert first["calc.py"] == digest
    assert first["test_calc.py"] == hashlib.sha256(PASSING.encode()).hexdigest()
    assert "gone.py" not in first
    result = check_results(harness.log.events)[-1]
    assert dependencies_current(root, result)
    (root / "calc.py").write_text(CALC + "\n\ndef sub(a, b):\n    return a - b\n")
    assert not dependencies_current(root, result)
    second = harness.run("unittest")["data"]["dependency_revisions"]
    assert second["calc.py"] != first["calc.py"]
    assert second["test_calc.py"] == first["test_calc.py"]
    assert dependencies_current(root, check_results(harness.log.events)[-1])


def test_declared_directories_record_their_source_files(root: Path) -> None:
    write_repo(root, {"src/pkg/__init__.py": "", "src/pkg/mod.py": "X = 1\n", "src/pkg/data.json": "{}"})
    check = CheckSpec("lint", (PYTHON, "-c", "pass"), paths=("src", "missing"))
    data = Harness(root, single(check)).run("lint")["data"]
    assert sorted(data["dependency_revisions"]) == ["src/pkg/__init__.py", "src/pkg/mod.py"]
    assert (data["outcome"], data["tests_run"]) == ("passed", None)


def test_timed_out_check_is_timed_out(root: Path) -> None:
    check = CheckSpec("slow", (PYTHON, "-c", "import time; time.sleep(30)"))
    ended = Harness(root, single(check), tool=RunCheck(timeout_s=0.5)).run("slow")
    assert ended["status"] == "error"
    assert ended["data"]["outcome"] == "timed_out"
    assert ended["data"]["duration_s"] < 20


def test_output_is_bounded_and_the_journal_keeps_everything(root: Path) -> None:
    check = CheckSpec("noisy", (PYTHON, "-c", "print('x' * 100_000)"))
    ended = Harness(root, single(check)).run("noisy")
    assert len(ended["output"].encode()) < 8192 + 1024
    assert "bytes omitted" in ended["output"]
    assert Path(ended["data"]["artifact"]).stat().st_size == 100_001


def test_a_coloured_runner_output_is_counted_and_shown_without_its_terminal_codes(root: Path) -> None:
    coloured = "print('\\x1b[32m\\x1b[1m3 passed\\x1b[0m\\x1b[32m in 0.10s\\x1b[0m')"
    ended = Harness(root, single(CheckSpec("colour", (PYTHON, "-c", coloured)))).run("colour")
    assert ended["data"]["outcome"] == "passed" and ended["data"]["tests_run"] == 3
    assert "\x1b" not in ended["output"] and "3 passed in 0.10s" in ended["output"]


def test_denied_approval_runs_nothing(root: Path) -> None:
    marker = root / "ran.txt"
    check = CheckSpec("touch", (PYTHON, "-c", f"open({str(marker)!r}, 'w').close()"))
    harness = Harness(root, single(check), policy="deny")
    ended = harness.run("touch")
    assert ended["status"] == "denied"
    assert "approval.requested" in harness.types()
    assert not marker.exists()
    assert not (harness.artifacts / "processes").exists()
    assert [(r.id, r.phase, r.outcome) for r in check_results(harness.log.events)] == [("touch", "verify", "denied")]


def test_root_discovery_records_tests_moved_into_a_package(root: Path) -> None:
    plan = unittest_repo(root)
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "test_calc.py").rename(root / "tests" / "test_calc.py")
    harness = Harness(root, plan)
    data = harness.run("unittest")["data"]
    assert (data["outcome"], data["tests_run"]) == ("passed", 2)
    assert {"tests/__init__.py", "tests/test_calc.py"} <= set(data["dependency_revisions"])
    (root / "tests" / "test_calc.py").write_text(FAILING)
    assert not dependencies_current(root, check_results(harness.log.events)[-1])
