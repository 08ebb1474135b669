"""``run_task``: the product's main job — objective in, governed work, evidence out."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from protoagent.agents.loop import AgentLoop, Budget, TurnOutcome
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec, builtin_tools
from protoagent.checks.interpreter import select_interpreter
from protoagent.checks.plan import plan_checks
from protoagent.checks.run_check import CHECK_TOOLS
from protoagent.checks.types import CheckPlan
from protoagent.errors import ConfigError
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.hooks.admission import ContextAdmissionHook
from protoagent.hooks.compact_protocol import CompactProtocolHook, WorkerCard
from protoagent.hooks.pipeline import HookRegistration
from protoagent.hooks.projection import ToolContextProjectionHook
from protoagent.integrations import integration_tools
from protoagent.integrations.mcp_broker import MCPBroker
from protoagent.models.protocol import ModelProvider
from protoagent.models.registry import ModelConfig, resolve_model
from protoagent.tools.approvals import Answerer, Policy
from protoagent.tools.base import AnyTool
from protoagent.workflow import roles
from protoagent.workflow.board import TaskBoard
from protoagent.workflow.contract import RunContract, Surface, select_contract
from protoagent.workflow.evidence import Evidence, check_results, compute_evidence
from protoagent.workflow.graph import WorkflowGraph
from protoagent.workflow.guards import run_guard
from protoagent.workflow.packets import PACKET_TOOLS
from protoagent.workflow.task import TaskRecord
from protoagent.workflow.task_tools import TASK_TOOLS
from protoagent.workflow.user_command import run_user_command
from protoagent.workflow.workers import WORKER_TOOLS, WorkerRunner, coder_max_windows, file_writes

RunStatus = Literal["completed", "incomplete", "failed"]
SMALL_PROFILE_MAX_OUTPUT = 384
"""Output tokens per small-profile action: one action is short, and a sub-1B model that loops
inside a JSON string should be cut off in seconds, not after a thousand tokens."""


@dataclass(frozen=True, slots=True)
class RunReport:
    """The evidence report of one run; the session log holds every fact behind it."""

    session_id: str
    status: RunStatus
    surface: Surface | Literal["command"]
    """The request's surface; ``command`` for a person's own ``!command``."""
    evidence: Evidence
    summary: str
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        e = self.evidence
        return {
            "session_id": self.session_id,
            "status": self.status,
            "surface": self.surface,
            "applied": e.applied,
            "verified": e.verified,
            "criteria_supported": e.criteria_supported,
            "changed_files": list(e.changed_files),
            "checks": [c.to_json() for c in e.checks],
            "verification": e.verification,
            "summary": self.summary,
            "notes": list(self.notes),
        }


@dataclass(slots=True)
class RunOptions:
    repo: Path
    model: str
    store: SessionStore
    approval: Policy = "ask"
    answerer: Answerer | None = None
    surface: Surface | None = None
    """Force a surface; no classification call is made then."""
    tester: bool = True
    scout: bool = False
    """Offer Scout's web_search/fetch_url to the Architect (off by default)."""
    mcp: bool = False
    """Offer the MCP broker's tools to the Architect (off by default)."""
    data_home: Path | None = None
    """Where user-level configuration (mcp.json) lives."""
    provider: ModelProvider | None = None
    model_config: ModelConfig = field(default_factory=ModelConfig)
    on_event: Callable[[Event], None] | None = None
    artifacts_root: Path | None = None
    max_model_calls: int = 80


def _profile(provider: ModelProvider) -> tuple[Literal["small", "standard"], Literal["native", "json"]]:
    return ("small", "json") if provider.name == "local" else ("standard", "native")


def _initial_record(objective: str, plan: CheckPlan, contract: RunContract, root: Path) -> TaskRecord:
    ids = plan.check_ids
    has_root_tests = any(root.glob("test_*.py"))
    baseline = tuple(c for c in ids if c not in plan.bootstrap_checks or has_root_tests)
    return TaskRecord(
        objective=objective,
        available_check_ids=ids,
        selected_check_ids=ids,
        bootstrap_check_ids=plan.bootstrap_checks,
        baseline_check_ids=baseline,
        read_only=contract.read_only,
        code_selection=ids,
    )


def _role_for(
    contract: RunContract, profile: Literal["small", "standard"], mode: Literal["native", "json"], tester: bool
) -> Preset:
    match contract.surface:
        case "conversation":
            return roles.conversation(profile, mode)
        case "question":
            return roles.question(profile, mode)
        case "verification":
            return roles.verifier(profile, mode)
        case _:
            return roles.architect(profile, mode, tester)


def _check_inputs(objective: str, repo: Path) -> Path:
    if not objective.strip():
        raise ConfigError("the objective is empty: say what you want done, e.g. 'fix the failing test'")
    root = Path(repo).expanduser()
    if not root.is_dir():
        raise ConfigError(f"repository {str(repo)!r} is not a directory; pass an existing folder with --repo")
    return root.resolve()


async def run_task(objective: str, options: RunOptions) -> RunReport:
    """Run one objective to an honest end and report applied, verified and criteria_supported."""
    root = _check_inputs(objective, options.repo)
    if objective.lstrip().startswith("!"):
        return await run_user_command(objective, root, options)
    provider = options.provider or resolve_model(options.model, options.model_config)
    contract = await select_contract(objective, options.surface, provider)
    interpreter = select_interpreter(root)
    plan = CheckPlan() if contract.surface == "conversation" else plan_checks(root, interpreter)
    profile, mode = _profile(provider)
    model_config = options.model_config
    if profile == "small" and model_config.max_output_tokens is None:
        model_config = replace(model_config, max_output_tokens=SMALL_PROFILE_MAX_OUTPUT)
    extras = integration_tools(scout=options.scout, mcp=options.mcp) if contract.surface == "editing" else ()
    role = _role_for(contract, profile, mode, options.tester)
    if extras:
        role = replace(role, tools=(*role.tools, *(cls.name for cls in extras)))
    services: dict[str, Any] = {"checks": plan, "python": interpreter.path}
    if options.mcp and extras:
        services["mcp_broker"] = MCPBroker.from_files(root, options.data_home)
    workflow_tools: tuple[type[AnyTool], ...] = (*TASK_TOOLS, *WORKER_TOOLS, *PACKET_TOOLS, *CHECK_TOOLS, *extras)
    tools = [*builtin_tools(), *(cls() for cls in workflow_tools)]
    spec = SessionSpec(
        repo=root,
        model=options.model,
        store=options.store,
        preset=role,
        approval=options.approval,
        answerer=options.answerer,
        title=objective[:120],
        model_config=model_config,
        tools=tools,
        services=services,
        provider=provider,
        on_event=options.on_event,
        artifacts_root=options.artifacts_root,
    )
    session = AgentSession.create(spec)
    log = session.log
    log.append("run.contract", contract.to_json())
    log.append("checks.discovered", plan.to_json())
    board = TaskBoard(log, _initial_record(objective, plan, contract, root))
    budget = Budget(options.max_model_calls)
    runner = WorkerRunner(session, board, budget, profile, mode, coder_max_windows())
    services.update(task=board, workers=runner, changed_files=lambda: _changed_files(log.events))
    session.pipeline.guards.append(run_guard(board, contract))
    _mount_hooks(session, board, runner, contract, profile, options)
    try:
        return await _drive(session, contract, board, runner, budget, role, objective)
    except (asyncio.CancelledError, KeyboardInterrupt):
        # The log says how the run ended even when the person stops it; what ran stays recorded.
        log.append("run.ended", {"status": "cancelled", "summary": "the run was interrupted"})
        raise
    finally:
        session.close()


WORKER_CARDS = (
    WorkerCard("coder", "task", "applies edits for one focused assignment now"),
    WorkerCard("tester", "task", "read-only: proposes regression cases and check ids"),
    WorkerCard("run_check", "check_id, phase", "Verifier runs a selected check (baseline or verify)"),
)


def _mount_hooks(
    session: AgentSession,
    board: TaskBoard,
    runner: WorkerRunner,
    contract: RunContract,
    profile: Literal["small", "standard"],
    options: RunOptions,
) -> None:
    """Before-model hooks: compact protocol (small profile), projection, admission with the task
    record re-inserted, and the Architect's yield after an exhausted Coder assignment."""
    hooks = session.hooks
    if profile == "small":
        cards = WORKER_CARDS if contract.surface == "editing" else ()
        hooks.register(CompactProtocolHook(identity="You are ProtoAgent.", cards=cards).registration())
    hooks.register(ToolContextProjectionHook.for_tools(session.registry.tools()).registration())
    record = None if contract.surface == "conversation" else (lambda: board.record.render())
    hooks.register(
        ContextAdmissionHook.for_provider(session.provider, options.model_config, profile, record).registration()
    )
    hooks.register(HookRegistration(95, "work-yield", runner.yield_hook))


async def _drive(
    session: AgentSession,
    contract: RunContract,
    board: TaskBoard,
    runner: WorkerRunner,
    budget: Budget,
    role: Preset,
    objective: str,
) -> RunReport:
    log = session.log
    deferred = contract.defer_verification
    failed = False
    if contract.surface == "editing":
        graph = WorkflowGraph(session, board, contract, runner, budget, role)
        state = await graph.run_editing(objective)
        failed, deferred = state.model_failed, state.deferred
        ended = log.last("turn.ended", agent="architect")
        last_reason = str(ended.payload.get("reason", "")) if ended is not None else ""
        summary = _final_text(log.events, "architect") or state.stop_reason or last_reason
    elif contract.surface == "verification":
        # The Verifier is model-free: the selected checks run as captured, and the receipts speak.
        await WorkflowGraph(session, board, contract, runner, budget, role).run_verification()
        summary = "; ".join(f"{r.id}: {r.outcome}" for r in check_results(log.events)) or "no checks to run"
    else:
        outcome: TurnOutcome = await AgentLoop(session, agent="architect", role=role, budget=budget).run_turn(objective)
        failed = outcome.status == "failed"
        summary = outcome.text
    evidence = compute_evidence(log.events, session.root, board.record, deferred=deferred)
    status = _status(contract, evidence, failed)
    log.append(
        "evidence.reported",
        {
            "applied": evidence.applied,
            "verified": evidence.verified,
            "criteria_supported": evidence.criteria_supported,
            "verification": evidence.verification,
            "changed_files": list(evidence.changed_files),
            "notes": list(evidence.notes),
        },
    )
    run_status = "completed" if status == "completed" else "failed" if status == "failed" else "incomplete"
    log.append("run.ended", {"status": run_status, "summary": summary})
    return RunReport(session.session_id, status, contract.surface, evidence, summary, evidence.notes)


def _changed_files(events: list[Event]) -> list[str]:
    return list(dict.fromkeys(str(e.payload["data"].get("path")) for e in file_writes(events)))


def _final_text(events: list[Event], agent: str) -> str:
    for event in reversed(events):
        if event.type == "model.completed" and event.agent == agent and not event.payload["tool_calls"]:
            return str(event.payload["text"])
    return ""


def _status(contract: RunContract, evidence: Evidence, failed: bool) -> RunStatus:
    if failed:
        return "failed"
    if contract.surface in ("conversation", "question"):
        return "completed"
    if contract.surface == "verification":
        return "completed" if evidence.verified else "incomplete"
    return "completed" if evidence.criteria_supported else "incomplete"
