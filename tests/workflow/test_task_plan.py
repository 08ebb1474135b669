"""TaskRecord and plan_task rules."""

from __future__ import annotations

from dataclasses import replace

import pytest

from protoagent.errors import ToolRejected
from protoagent.events import MemoryStore, SessionLog
from protoagent.tools.services import RunServices
from protoagent.workflow.board import TaskBoard
from protoagent.workflow.task import TaskRecord, current_task
from protoagent.workflow.task_tools import PlanArgs, plan

RECORD = TaskRecord(
    objective="fix dates",
    available_check_ids=("unittest", "npm-lint"),
    selected_check_ids=("unittest", "npm-lint"),
    code_selection=("unittest", "npm-lint"),
)
BOOTSTRAP = TaskRecord(
    objective="add slugify",
    available_check_ids=("python-tests",),
    selected_check_ids=("python-tests",),
    bootstrap_check_ids=("python-tests",),
)


def test_invalid_check_ids_are_rejected_with_available_check_ids_and_change_nothing() -> None:
    with pytest.raises(ToolRejected) as caught:
        plan(RECORD, PlanArgs(paths=["dates.py"], criteria=["x"], check_ids=["pytest"]))
    assert caught.value.kind == "unknown_check_ids"
    assert caught.value.details["available_check_ids"] == ["unittest", "npm-lint"]


def test_omitted_or_empty_check_ids_keep_the_selection_for_code() -> None:
    assert plan(RECORD, PlanArgs(paths=["dates.py"])).selected_check_ids == ("unittest", "npm-lint")
    assert plan(RECORD, PlanArgs(paths=["dates.py"], check_ids=[])).selected_check_ids == ("unittest", "npm-lint")


def test_documentation_only_plan_may_select_no_checks() -> None:
    planned = plan(RECORD, PlanArgs(paths=["README.md", "docs/guide.rst"], check_ids=[]))
    assert planned.selected_check_ids == ()


def test_plan_narrows_scope_criteria_and_checks() -> None:
    planned = plan(RECORD, PlanArgs(paths=["./dates.py"], criteria=["parses ISO dates"], check_ids=["unittest"]))
    assert planned.allowed_paths == ("dates.py",)
    assert planned.criteria == ("parses ISO dates",) and planned.selected_check_ids == ("unittest",)


def test_bootstrap_plan_scope_must_include_a_root_test_file() -> None:
    with pytest.raises(ToolRejected) as caught:
        plan(BOOTSTRAP, PlanArgs(paths=["slug.py"]))
    assert caught.value.kind == "bootstrap_scope"
    with pytest.raises(ToolRejected):
        plan(BOOTSTRAP, PlanArgs(paths=["slug.py", "tests/test_slug.py"]))
    assert plan(BOOTSTRAP, PlanArgs(paths=["slug.py", "test_slug.py"])).allowed_paths == ("slug.py", "test_slug.py")


def test_frozen_plan_cannot_change() -> None:
    with pytest.raises(ToolRejected) as caught:
        plan(replace(RECORD, frozen=True), PlanArgs(check_ids=["unittest"]))
    assert caught.value.kind == "plan_frozen"


def test_task_record_lives_in_events_and_reloads() -> None:
    store = MemoryStore()
    log = SessionLog(store, "s_t")
    log.append("session.created", {"preset": "p", "model": "m", "root": "/", "approval_policy": "auto"})
    board = TaskBoard(log, RECORD)
    board.freeze("write proposed")
    reloaded = current_task(store.load("s_t"))
    assert reloaded == replace(RECORD, frozen=True)
    assert "selected_check_ids" in reloaded.render() and "plan: frozen" in reloaded.render()


def test_worker_packet_is_bounded_and_never_executes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import asyncio
    import json as jsonlib

    from protoagent.tools.base import ToolContext
    from protoagent.workflow.packets import PacketArgs, WorkerPacket

    big = "x = 1\n" * 1500
    (tmp_path / "a.py").write_text(big)
    (tmp_path / "b.py").write_text(big)
    log = SessionLog(MemoryStore(), "s_p")
    log.append("session.created", {"preset": "p", "model": "m", "root": str(tmp_path), "approval_policy": "auto"})
    board = TaskBoard(log, RECORD)
    ctx = ToolContext("s_p", "c1", tmp_path, "architect", services=RunServices(task=board))
    tool = WorkerPacket()
    out = asyncio.run(
        tool.execute(tool.prepare(PacketArgs(role="coder", objective="fix", paths=["a.py", "b.py", "../x"]), ctx), ctx)
    )
    packet = jsonlib.loads(out.text)
    assert packet["executed"] is False and "Delegate it now" in packet["reminder"]
    assert sum(len(s.get("content", "")) for s in packet["sources"]) <= 6000
    assert "error" in packet["sources"][2] or "omitted" in packet["sources"][2]
    with pytest.raises(ToolRejected):
        tool.prepare(PacketArgs(role="coder", objective="fix", paths=[f"f{i}.py" for i in range(9)]), ctx)
    with pytest.raises(ValueError, match="role"):
        PacketArgs(role="senior engineer", objective="fix")  # type: ignore[arg-type]
