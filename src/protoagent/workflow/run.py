"""``run_task``: the product's main job — objective in, governed work, evidence out."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path
from typing import Literal

from protoagent.agents.definition import AppMode
from protoagent.agents.loop import DEFAULT_MODEL_CALLS, AgentLoop, Budget
from protoagent.agents.modes import check_resume
from protoagent.agents.presets import Preset
from protoagent.agents.profiles import ARCHITECT, DEFAULT_LEADS
from protoagent.agents.session import AgentSession, SessionSpec, builtin_tools
from protoagent.agents.trust import DIAGNOSTICS_EVENT as AGENTS_DIAGNOSTICS
from protoagent.checks.interpreter import select_interpreter
from protoagent.checks.plan import plan_checks
from protoagent.checks.run_check import CHECK_TOOLS
from protoagent.checks.tracked import RunnerRevisions
from protoagent.checks.types import CheckPlan
from protoagent.events.catalog import ModelCompleted, TurnEnded
from protoagent.events.log import SessionLog
from protoagent.events.queries import facts, last_fact
from protoagent.events.types import Event
from protoagent.events.usage import run_token_totals
from protoagent.hooks.admission import ContextAdmissionHook
from protoagent.hooks.compact_protocol import CompactProtocolHook, WorkerCard
from protoagent.hooks.pipeline import HookRegistration
from protoagent.hooks.projection import ToolContextProjectionHook
from protoagent.hooks.skills import start_skills
from protoagent.hooks.workspace_instructions import WorkspaceInstructionsHook
from protoagent.integrations import integration_tools
from protoagent.integrations.mcp_broker import MCPBroker
from protoagent.integrations.mcp_native import mount_native
from protoagent.integrations.mcp_prompts import expand_prompt_command
from protoagent.models.profile import detect_profile
from protoagent.skills.session_skills import offered_skill_tool, resolver_enabled, skills_for_run
from protoagent.skills.tool import SkillTool
from protoagent.tools.base import AnyTool
from protoagent.tools.services import RunServices
from protoagent.workflow import roles
from protoagent.workflow.board import TaskBoard
from protoagent.workflow.check_redirect import with_check_redirect
from protoagent.workflow.contract import RunContract
from protoagent.workflow.criteria import CRITERIA_TOOLS
from protoagent.workflow.deferral import LATER_DEFERRAL, session_contract
from protoagent.workflow.delegation import BUILTIN_DELEGATE_TOOLS
from protoagent.workflow.evidence import Evidence, check_results, compute_evidence
from protoagent.workflow.facts import writes
from protoagent.workflow.graph import WorkflowGraph
from protoagent.workflow.guards import run_guard
from protoagent.workflow.limits import limits_for
from protoagent.workflow.packets import PACKET_TOOLS
from protoagent.workflow.phase_control import run_start
from protoagent.workflow.question import answer_question
from protoagent.workflow.run_models import prepare_models, run_models
from protoagent.workflow.run_options import RunOptions, RunReport, RunStatus, check_inputs, run_sandbox
from protoagent.workflow.task import TaskRecord, current_task
from protoagent.workflow.task_tools import TASK_TOOLS, PlanTask
from protoagent.workflow.team import RunTeam, assemble_team, check_tools, lead_role, resumed_facts
from protoagent.workflow.user_command import run_user_command
from protoagent.workflow.workers import WorkerRunner

__all__ = ["RunOptions", "RunReport", "RunStatus", "run_sandbox", "run_task"]

SMALL_PROFILE_MAX_OUTPUT = 384
"""Output tokens per small-profile action: one action is short, and a sub-1B model that loops
inside a JSON string should be cut off in seconds, not after a thousand tokens."""


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


async def run_task(objective: str, options: RunOptions) -> RunReport:
    """Run one objective to an honest end and report applied, verified and criteria_supported."""
    started = time.monotonic()  # the run's time limit counts from here, model load included
    roots = check_inputs(objective, options)
    team = _team(options, roots[0])
    root, extra = team.root, _extra_roots(team, roots[1:])
    run_sandbox(options)  # refuses a required sandbox that is missing before anything runs
    budget = Budget(DEFAULT_MODEL_CALLS if options.max_model_calls is None else options.max_model_calls)
    if options.mcp:  # "/mcp:<server>:<prompt> ..." becomes the prompt's text
        objective = await expand_prompt_command(
            objective,
            root,
            options.data_home,
            policy=options.approval,
            answerer=options.answerer,
            sandbox=run_sandbox(options),
        )
    if objective.lstrip().startswith("!"):
        return await run_user_command(objective, team, extra, options)
    models = run_models(options, team)
    await prepare_models(models, options.data_home)  # the embedded model's probe: before anything is written
    provider = models.lead
    earlier = options.store.load(options.resume) if options.resume is not None else []
    contract = (
        WORK_CONTRACT if team.mode == "work" else await session_contract(objective, options.surface, provider, earlier)
    )
    interpreter = select_interpreter(root)
    plan = CheckPlan() if contract.surface == "conversation" else plan_checks(root, interpreter)
    choice = await detect_profile(provider, options.profile, options.model_config.context_window)
    profile, mode = choice.profile, choice.action_mode
    limits = limits_for(profile, options.max_model_calls)
    budget.max_model_calls = limits.model_calls
    budget.start_clock(limits.seconds, started)
    model_config = options.model_config
    if model_config.context_window is None and choice.window is not None:
        # Admission uses the window the server reported instead of assuming one.
        model_config = replace(model_config, context_window=choice.window)
    if profile == "small" and model_config.max_output_tokens is None:
        model_config = replace(model_config, max_output_tokens=SMALL_PROFILE_MAX_OUTPUT)
    extras = integration_tools(scout=options.scout, mcp=options.mcp) if contract.surface == "editing" else ()
    role = lead_role(team, roles.for_surface(contract.surface, profile, mode, options.tester))
    role = replace(role, max_steps=min(role.max_steps, limits.lead_steps))
    if extras:
        role = replace(role, tools=(*role.tools, *(cls.name for cls in extras)))
    # Before any command of the run: what each check runs, so a replaced runner is noticed.
    check_runners = RunnerRevisions.at_start(plan, root, interpreter.path)
    sandbox = run_sandbox(options)
    broker = MCPBroker.from_files(root, options.data_home, sandbox=sandbox) if options.mcp and extras else None
    repos = (root, *extra) if team.mode == "coding" else ()
    skills = skills_for_run(contract.surface, team.mode, repos, options.data_home, model_config.context_window)
    if skills is not None:
        role = replace(role, tools=(*role.tools, *offered_skill_tool(skills, objective, team.lead.skills)))
        extras = (*extras, SkillTool)
    services = RunServices(
        python=interpreter.path,
        sandbox=sandbox,
        checks=plan,
        check_runners=check_runners,
        data_home=options.data_home,  # code_context keeps its index cache there (None: the default)
        skills=skills,
        mcp_broker=broker,
        context_window=model_config.context_window,
    )
    workflow_tools: tuple[type[AnyTool], ...] = (
        *TASK_TOOLS,
        *CRITERIA_TOOLS,
        *BUILTIN_DELEGATE_TOOLS,
        *PACKET_TOOLS,
        *CHECK_TOOLS,
        *extras,
    )
    tools = [*with_check_redirect(builtin_tools()), *(cls() for cls in workflow_tools), *team.delegate_tools()]
    check_tools((team.lead, *team.members), {t.name for t in tools})
    spec = SessionSpec(
        repo=root,
        model=models.spec,
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
        mode=team.mode,
        lead=team.lead.name,
        resume_id=options.resume,
        session_id=options.session_id,
        extra_roots=extra,
        agent_providers=models.members,
    )
    session = AgentSession.create(spec)
    log = session.log
    log.append("run.contract", contract.to_json())
    log.append("checks.discovered", plan.to_json())
    if broker is not None and broker.diagnostics:
        log.append("mcp.diagnostics", {"diagnostics": list(broker.diagnostics)})
    ignored = [line for agent in (team.lead, *team.members) for line in agent.ignored]
    if ignored:  # repository agent fields the person has not trusted: the run goes on without them
        log.append(AGENTS_DIAGNOSTICS, {"diagnostics": ignored})
    board = _board(log, objective, plan, contract, root, resumed=options.resume is not None)
    members = {m.name: m for m in team.members}
    runner = WorkerRunner(session, board, budget, profile, mode, limits.coder_windows, members)
    session.provide(
        replace(session.services, task=board, workers=runner, changed_files=lambda: _changed_files(log.events))
    )
    if team.mode == "coding":
        # The task workflow's write scope; a Work lead writes in its own session workspace.
        session.pipeline.guards.append(run_guard(board, contract))
    _mount_hooks(session, board, runner, contract, profile, team)
    try:
        if broker is not None:
            role = await mount_native(broker, session.registry, role, log)
        if skills is not None:
            resolver = resolver_enabled(options.skill_resolver, profile, provider.name)
            await start_skills(
                session.hooks,
                log,
                skills,
                objective,
                agent=role.name if team.mode == "work" else ARCHITECT,
                tools=session.registry.tools(),
                role_tools=role.tools,
                resolver=provider if resolver else None,
                assigned=team.lead.skills,
            )
        return await _drive(session, contract, board, runner, budget, role, objective)
    except (asyncio.CancelledError, KeyboardInterrupt):
        # The log says how the run ended even when the person stops it; what ran stays recorded.
        log.append("run.ended", {"status": "cancelled", "summary": "the run was interrupted"})
        raise
    finally:
        if broker is not None:
            await broker.aclose()  # every MCP server this run started stops with it, however it ends
        session.close()


RUN_CHECK_CARD = WorkerCard("run_check", "check_id, phase", "Verifier runs a selected check (baseline or verify)")
WORK_CONTRACT = RunContract("conversation", "forced", "work mode: the lead works in the session workspace")
"""Work sessions skip classification: the lead answers with its own tools and team."""


def _team(options: RunOptions, root: Path) -> RunTeam:
    resumed = resumed_facts(options.store, options.resume) if options.resume is not None else None
    return assemble_team(
        repo=root,
        mode=options.mode,
        agent=options.agent,
        resumed=resumed,
        data_home=options.data_home,
        tester=options.tester,
    )


def _extra_roots(team: RunTeam, asked: tuple[Path, ...]) -> tuple[Path, ...]:
    """A new Coding session's further repositories; a resumed session's persisted ones (a
    different set asked for is refused)."""
    if team.resumed is None:
        return asked if team.mode == "coding" else ()
    if asked:
        check_resume(team.resumed, None, None, None, extra=asked)
    return team.resumed.extra_roots


def _board(
    log: SessionLog, objective: str, plan: CheckPlan, contract: RunContract, root: Path, resumed: bool
) -> TaskBoard:
    """A new run's task record, or on resume the session's own record, open for new planning."""
    previous = current_task(log.events) if resumed else None
    if previous is not None:
        return TaskBoard(log, replace(previous, frozen=False, plan_corrections=0), reason="resumed")
    return TaskBoard(log, _initial_record(objective, plan, contract, root))


def _mount_hooks(
    session: AgentSession,
    board: TaskBoard,
    runner: WorkerRunner,
    contract: RunContract,
    profile: Literal["small", "standard"],
    team: RunTeam,
) -> None:
    """Before-model hooks: workspace instructions (Coding), compact protocol (small profile),
    projection, admission with the task record re-inserted, and the Architect's yield after an
    exhausted Coder assignment."""
    hooks = session.hooks
    if team.mode == "coding":
        hooks.register(WorkspaceInstructionsHook(session.roots).registration())
    if profile == "small":
        editing = contract.surface == "editing" or team.mode == "work"
        offered = [card for card in team.cards() if card.name in session.preset.tools]  # a card's tool is offered
        cards = (*offered, *((RUN_CHECK_CARD,) if team.mode == "coding" else ())) if editing else ()
        hooks.register(CompactProtocolHook(identity="You are ProtoAgent.", cards=cards).registration())
    projection = ToolContextProjectionHook.for_provider(
        session.registry.tools(), session.provider, session.spec.model_config, profile
    )
    hooks.register(projection.registration())
    checks = contract.surface != "question"  # The question surface cannot run checks.
    record = (
        None
        if contract.surface == "conversation"
        else (lambda tools: board.record.render(checks=checks, planning=PlanTask.name in tools))
    )
    admission = ContextAdmissionHook.for_provider(session.provider, session.spec.model_config, profile, record)
    hooks.register(admission.registration())
    session.provide(replace(session.services, compactor=admission.compactor))  # the loop compacts with it
    hooks.register(HookRegistration("work-yield", runner.yield_hook))


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
    stuck = unanswered = ""
    if contract.surface == "editing":
        graph = WorkflowGraph(session, board, contract, runner, budget, role)
        state = await graph.run_editing(objective)
        failed, deferred, stuck = state.model_failed, state.deferred, state.stuck
        ended = last_fact(log.events, TurnEnded, agent=ARCHITECT)
        last_reason = ended[1].reason if ended is not None else ""
        summary = state.summary or _final_text(log.events, ARCHITECT) or state.stop_reason or last_reason
    elif contract.surface == "verification":
        # The Verifier is model-free: the selected checks run as captured, and the receipts speak.
        await WorkflowGraph(session, board, contract, runner, budget, role).run_verification()
        ran = check_results(_evidence_events(log.events, contract))
        summary = "; ".join(f"{r.id}: {r.outcome}" for r in ran) or "no checks to run"
    else:
        agent = role.name if session.spec.mode == "work" else ARCHITECT
        if contract.surface == "question":
            asked = await answer_question(session, role, budget, objective, agent)
            outcome, unanswered = asked.outcome, asked.unanswered
        else:
            outcome = await AgentLoop(session, agent=agent, role=role, budget=budget).run_turn(objective)
            unanswered = f"no answer: {outcome.text}" if outcome.status == "limit" else ""
        failed = outcome.status == "failed"
        summary = outcome.text
    editing = contract.surface == "editing"
    covered = _evidence_events(log.events, contract)
    evidence = compute_evidence(covered, session.root, board.record, deferred=deferred, criteria=editing)
    if stuck:
        evidence = replace(evidence, notes=(*evidence.notes, f"the work phase ended early, stuck: {stuck}"))
    if unanswered:
        evidence = replace(evidence, notes=(*evidence.notes, unanswered))
    status = _status(contract, evidence, failed, bool(unanswered))
    log.append("evidence.reported", evidence.to_payload())
    run_status = "completed" if status == "completed" else "failed" if status == "failed" else "incomplete"
    log.append("run.ended", {"status": run_status, "summary": summary})
    spec = session.spec
    lead = spec.lead or DEFAULT_LEADS["coding"]
    mode: AppMode = "work" if spec.mode == "work" else "coding"
    tokens = run_token_totals(log.events)
    return RunReport(
        session.session_id, status, contract.surface, evidence, summary, evidence.notes, mode, lead, tokens
    )


def _evidence_events(events: list[Event], contract: RunContract) -> list[Event]:
    """What a run's evidence covers: its own events (from its ``run.contract``), so each run of a
    resumed session reports its own checks and changes. A later deferral hands the session's
    earlier changes to the person, so its evidence covers the whole session."""
    if contract.reason == LATER_DEFERRAL:
        return events
    start = run_start(events)
    return [e for e in events if e.seq >= start]


def _changed_files(events: list[Event]) -> list[str]:
    return list(dict.fromkeys(str(ended.data.get("path")) for _, ended in writes(events)))


def _final_text(events: list[Event], agent: str) -> str:
    return next((m.text for _, m in facts(reversed(events), ModelCompleted, agent=agent) if not m.tool_calls), "")


def _status(contract: RunContract, evidence: Evidence, failed: bool, unanswered: bool = False) -> RunStatus:
    if failed:
        return "failed"
    if contract.surface in ("conversation", "question"):
        # A turn that ended without an answer (its steps ran out, or it kept repeating a call) did not complete.
        return "incomplete" if unanswered else "completed"
    if contract.surface == "verification":
        return "completed" if evidence.verified else "incomplete"
    return "completed" if evidence.criteria_supported else "incomplete"
