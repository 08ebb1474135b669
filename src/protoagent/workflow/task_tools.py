"""Architect and worker task tools: task_status, plan_task, report_task."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, Field

from protoagent.agents.profiles import LEADS
from protoagent.errors import ToolRejected
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workflow.board import PLAN_CORRECTIONS_PER_INFERENCE, TaskBoard
from protoagent.workflow.task import TaskRecord, WorkerReport, is_documentation_path


def board_of(ctx: ToolContext) -> TaskBoard:
    board = ctx.services.task
    if board is None:
        raise ToolRejected("there is no task record in this session", kind="no_task")
    return board


class NoArgs(BaseModel):
    pass


class TaskStatus(Tool[NoArgs]):
    name = "task_status"
    description = "Read the current task record."
    input_model = NoArgs
    metadata = ToolMetadata(effect="none", observation="exact")

    def prepare(self, args: NoArgs, ctx: ToolContext) -> Prepared:
        return Prepared(preview="task_status", effect="none", state=board_of(ctx).record)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        record: TaskRecord = prepared.state
        return ToolOutput(record.render(), data={"record": record.to_json()})


class PlanArgs(BaseModel):
    paths: list[str] | None = None
    """Files the change may write."""
    criteria: list[str] | None = None
    check_ids: list[str] | None = None
    """Ids from the record's available_check_ids."""


class PlanTask(Tool[PlanArgs]):
    name = "plan_task"
    description = "Before edits: writable paths, criteria, check ids."
    input_model = PlanArgs
    metadata = ToolMetadata(effect="none", observation="exact", roles=LEADS)

    def prepare(self, args: PlanArgs, ctx: ToolContext) -> Prepared:
        board = board_of(ctx)
        try:
            planned = plan(board.record, args)
        except ToolRejected as rejection:
            _count_correction(board, rejection)
            raise
        return Prepared(preview=json.dumps(args.model_dump()), effect="none", state=planned)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        board = board_of(ctx)
        record = board.update(prepared.state, "plan_task")
        return ToolOutput("plan recorded\n" + record.render(), data={"record": record.to_json()})


def _count_correction(board: TaskBoard, rejection: ToolRejected) -> None:
    used = board.record.plan_corrections + 1
    board.update(replace(board.record, plan_corrections=used), f"plan rejected: {rejection.kind}")
    if used > PLAN_CORRECTIONS_PER_INFERENCE:
        rejection.kind = "plan_corrections_exhausted"
        rejection.message += (
            f" You have used the {PLAN_CORRECTIONS_PER_INFERENCE} plan corrections of this "
            "inference; continue with the current plan."
        )


def plan(record: TaskRecord, args: PlanArgs) -> TaskRecord:
    """Apply ``plan_task`` rules to a record; raise ``ToolRejected`` without changing anything."""
    if record.frozen:
        raise ToolRejected(
            "the plan is frozen: a write or final check was already proposed in this run", kind="plan_frozen"
        )
    paths = tuple(p.strip().removeprefix("./") for p in (args.paths or ()) if p.strip())
    if args.check_ids:
        unknown = [c for c in args.check_ids if c not in record.available_check_ids]
        if unknown:
            raise ToolRejected(
                f"unknown check id(s) {unknown}; choose from available_check_ids",
                kind="unknown_check_ids",
                details={"available_check_ids": list(record.available_check_ids)},
            )
    docs_only = bool(paths) and all(is_documentation_path(p) for p in paths)
    if args.check_ids:
        selected = tuple(args.check_ids)
    elif args.check_ids == [] and docs_only:
        selected = ()
    else:
        selected = record.selected_check_ids
    _check_bootstrap_scope(record, paths, selected)
    return replace(
        record,
        allowed_paths=paths or record.allowed_paths,
        criteria=tuple(args.criteria) if args.criteria else record.criteria,
        selected_check_ids=selected,
        code_selection=selected if selected else record.code_selection,
        plan_corrections=0,
    )


def _check_bootstrap_scope(record: TaskRecord, paths: tuple[str, ...], selected: tuple[str, ...]) -> None:
    bootstrap = [c for c in selected if c in record.bootstrap_check_ids]
    if not bootstrap or not paths:
        return
    if not any("/" not in p and p.startswith("test_") and p.endswith(".py") for p in paths):
        raise ToolRejected(
            "this project has no tests yet: the bootstrap check runs root test_*.py files, so a narrowed "
            "write scope must include a root regression file such as test_<feature>.py",
            kind="bootstrap_scope",
            details={"bootstrap_checks": list(record.bootstrap_check_ids), "paths": list(paths)},
        )


class ReportArgs(BaseModel):
    status: Literal["done", "needs_context", "blocked"]
    summary: str = Field(description="one or two sentences")
    missing_paths: list[str] = Field(default_factory=list)


class ReportTask(Tool[ReportArgs]):
    name = "report_task"
    description = "End your assignment with its outcome."
    input_model = ReportArgs
    metadata = ToolMetadata(effect="none", observation="exact")

    def prepare(self, args: ReportArgs, ctx: ToolContext) -> Prepared:
        board_of(ctx)
        return Prepared(preview=args.status, effect="none", state=args)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        args: ReportArgs = prepared.state
        report = WorkerReport(ctx.agent_role, args.status, args.summary, tuple(args.missing_paths))
        board_of(ctx).report(report)
        data: dict[str, Any] = {
            "status": args.status,
            "role": ctx.agent_role,
            "summary": args.summary,
            "missing_paths": list(args.missing_paths),
        }
        return ToolOutput(f"report recorded: {args.status}", data=data)


TASK_TOOLS = (TaskStatus, PlanTask, ReportTask)
