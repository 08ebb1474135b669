"""Skills at the start of a turn: discovery for the session, explicit ``$name`` / ``/skill:name``
activations, agent-assigned preloads (a lead's and each member's), and otherwise the implicit
resolver — all recorded, each activation for the agent it is made for."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.events.catalog import SkillActivated
from protoagent.events.log import SessionLog
from protoagent.events.queries import facts
from protoagent.models.protocol import ModelProvider
from protoagent.skills.activation import (
    SKILL_TOOL,
    Activation,
    Trigger,
    assigned_bundles,
    explicit_bundles,
    refused_mentions,
)
from protoagent.skills.discovery import load_skills
from protoagent.skills.model import AppMode, SkillBundle
from protoagent.skills.resolver import SKIPPED_REASON, Decision, plausible_skills, resolve_skill
from protoagent.skills.runtime import SkillRuntime

ACTIVATED_EVENT = "skill.activated"
RESOLVED_EVENT = "skill.resolved"


def session_runtime(
    repos: Sequence[Path],
    home: Path | None,
    mode: AppMode,
    *,
    context_window: int | None = None,
    persist_cache: bool = False,
) -> SkillRuntime:
    """Discover skills once for a session (the user's overlay applied); only a run's bootstrap
    sets ``persist_cache`` to keep new YAML parses in the data home."""
    index = load_skills(repos, home, persist_cache=persist_cache)
    return SkillRuntime(index, mode, tuple(repos), context_window)


def record_activation(log: SessionLog, runtime: SkillRuntime, activation: Activation, request: str, agent: str) -> None:
    """Store a pre-model activation; the skills hook turns it into the canonical assistant/tool pair."""
    call_id = f"skill-{activation.trigger}-{sum(1 for _ in facts(log.events, SkillActivated)) + 1}"
    log.append(
        ACTIVATED_EVENT, {"call_id": call_id, "request": request, "activation": activation.to_json()}, agent=agent
    )
    runtime.mark_loaded(activation, agent)


def _activate_each(
    log: SessionLog, runtime: SkillRuntime, bundles: Sequence[SkillBundle], trigger: Trigger, agent: str, source: str
) -> list[Activation]:
    """Each bundle's activation for ``agent``; one whose dependencies the agent's role may not have
    is refused with its recorded reason, and the others still activate."""
    out = []
    for bundle in bundles:
        try:
            out.append(runtime.activate(bundle, trigger, agent))
        except ToolRejected as exc:
            log.append(
                RESOLVED_EVENT,
                {"skill": None, "refused": bundle.name, "source": source, "reason": exc.message},
                agent=agent,
            )
    return out


def preload_assigned(
    log: SessionLog, runtime: SkillRuntime, agent: str, assigned: Sequence[str], request: str
) -> list[Activation]:
    """Assignment is the one unconditional preload, for leads and members alike: each assigned
    skill not yet in ``agent``'s context is activated for it and recorded (unknown names too)."""
    bundles, unknown = assigned_bundles(assigned, runtime.index, runtime.mode)
    for name in unknown:
        log.append(
            RESOLVED_EVENT,
            {"skill": None, "source": "agent", "reason": f"assigned skill {name!r} not found"},
            agent=agent,
        )
    fresh = [b for b in bundles if runtime.loaded_for(agent).get(b.name) != b.identity]
    chosen = _activate_each(log, runtime, fresh, "agent", agent, "agent")
    for activation in chosen:
        record_activation(log, runtime, activation, request, agent)
    return chosen


def preload_member(
    runtime: SkillRuntime | None,
    log: SessionLog,
    agent: str,
    assigned: Sequence[str],
    role_tools: Collection[str],
    request: str,
) -> None:
    """At the start of a member's assignment: its assigned skills, preloaded for it alone and
    bounded by ``role_tools``. A session without skills has nothing to preload."""
    if not assigned or runtime is None:
        return
    runtime.enrol(agent, role_tools)
    preload_assigned(log, runtime, agent, assigned, request)


async def activate_for_request(
    log: SessionLog,
    runtime: SkillRuntime,
    request: str,
    agent: str,
    provider: ModelProvider | None,
    assigned: Sequence[str] = (),
) -> list[Activation]:
    """Assigned skills preload unconditionally; names in the request activate exactly (a named skill
    whose manual invocation is off is refused with a recorded one-line reason); only when the
    request names no skill and none is assigned does the implicit resolver decide (one or none), and
    only when some eligible skill is plausible for the request (``plausible_skills``)."""
    chosen = preload_assigned(log, runtime, agent, assigned, request)
    mentioned = explicit_bundles(request, runtime.index, runtime.mode)
    loaded = runtime.loaded_for(agent)
    named = [b for b in mentioned if b.name not in {c.name for c in chosen} and loaded.get(b.name) != b.identity]
    explicit = _activate_each(log, runtime, named, "mention", agent, "explicit")
    refused = refused_mentions(request, runtime.index, runtime.mode)
    for name, message in refused:
        log.append(
            RESOLVED_EVENT, {"skill": None, "source": "explicit", "refused": name, "reason": message}, agent=agent
        )
    preloads = [n for n in assigned if runtime.index.find(n, runtime.mode) is not None]
    if not preloads and not mentioned and not refused and provider is not None:
        eligible = [b for b in runtime.index.implicit(runtime.mode) if b.name not in loaded]
        if eligible and not plausible_skills(request, eligible):
            # No round trip the resolver could win: say so, so an audit sees why none was made.
            skipped = {**Decision(None, reason=SKIPPED_REASON).to_json(), "skipped": True}
            log.append(RESOLVED_EVENT, {**skipped, "source": "resolver"}, agent=agent)
            decision = Decision(None)
        else:
            decision = await resolve_skill(request, runtime.mode, eligible, provider)
            log.append(RESOLVED_EVENT, {**decision.to_json(), "source": "resolver"}, agent=agent)
        bundle = runtime.index.find(decision.skill, runtime.mode) if decision.skill else None
        if bundle is not None:
            explicit += _activate_each(log, runtime, [bundle], "resolver", agent, "resolver")
    for activation in explicit:
        record_activation(log, runtime, activation, request, agent)
    return [*chosen, *explicit]


def skills_for_run(
    surface: str, mode: AppMode, repos: Sequence[Path], home: Path | None, context_window: int | None
) -> SkillRuntime | None:
    """The skills of a run in ``mode``, or ``None`` when a Coding conversation takes no skills
    or no skill is available in the mode. Work sessions always take their own skills."""
    if surface == "conversation" and mode == "coding":
        return None
    runtime = session_runtime(repos, home, mode, context_window=context_window, persist_cache=True)
    return runtime if runtime.index.runtime(mode) else None


def offered_skill_tool(runtime: SkillRuntime, request: str, assigned: Sequence[str]) -> tuple[str, ...]:
    """The ``skill`` tool a lead's requests declare, or none: only when the lead can load a skill
    with it, that is when the catalog lists one (the model may choose it) or one is assigned to the
    lead or named in the request (its resources are read through the tool). Skills that only a
    person may invoke give the model nothing to call."""
    index, mode = runtime.index, runtime.mode
    return (SKILL_TOOL,) if index.implicit(mode) or assigned or explicit_bundles(request, index, mode) else ()


def resolver_enabled(choice: bool | None, profile: str, provider_name: str) -> bool:
    """Auto: the standard profile runs the resolver; the small profile relies on the bounded
    catalog (a sub-1B model's decision is noise), and a scripted model only when a test asks."""
    if choice is not None:
        return choice
    return profile == "standard" and provider_name != "scripted"
