"""Skills at the start of a turn: discovery for the session, explicit ``$name`` / ``/skill:name``
activations, agent-assigned preloads, and otherwise the implicit resolver — all recorded."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.events.log import SessionLog
from protoagent.models.protocol import ModelProvider
from protoagent.skills.activation import (
    Activation,
    activate,
    assigned_activations,
    explicit_activations,
    refused_mentions,
)
from protoagent.skills.discovery import load_skills
from protoagent.skills.model import AppMode
from protoagent.skills.resolver import resolve_skill
from protoagent.skills.runtime import SkillRuntime

ACTIVATED_EVENT = "skill.activated"
RESOLVED_EVENT = "skill.resolved"


def session_runtime(
    repos: Sequence[Path],
    home: Path | None,
    mode: AppMode,
    *,
    context_window: int | None = None,
    available_tools: Collection[str] | None = None,
    persist_cache: bool = False,
) -> SkillRuntime:
    """Discover skills once for a session (the user's overlay applied); only a run's bootstrap
    sets ``persist_cache`` to keep new YAML parses in the data home."""
    index = load_skills(repos, home, persist_cache=persist_cache)
    return SkillRuntime(index, mode, tuple(repos), context_window, available_tools)


def record_activation(log: SessionLog, runtime: SkillRuntime, activation: Activation, request: str, agent: str) -> None:
    """Store a pre-model activation; the skills hook turns it into the canonical assistant/tool pair."""
    call_id = f"skill-{activation.trigger}-{sum(1 for e in log.events if e.type == ACTIVATED_EVENT) + 1}"
    log.append(
        ACTIVATED_EVENT, {"call_id": call_id, "request": request, "activation": activation.to_json()}, agent=agent
    )
    runtime.mark_loaded(activation)


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
    request names no skill and none is assigned does the implicit resolver decide (one or none)."""
    chosen: list[Activation] = []
    try:
        preload, unknown = assigned_activations(assigned, runtime.index, runtime.mode, runtime.available_tools)
        chosen.extend(preload)
        chosen.extend(
            a
            for a in explicit_activations(request, runtime.index, runtime.mode, runtime.available_tools)
            if a.name not in {c.name for c in chosen}
        )
    except ToolRejected as exc:
        log.append(RESOLVED_EVENT, {"skill": None, "source": "explicit", "reason": exc.message}, agent=agent)
        return []
    for name in unknown:
        log.append(
            RESOLVED_EVENT,
            {"skill": None, "source": "agent", "reason": f"assigned skill {name!r} not found"},
            agent=agent,
        )
    refused = refused_mentions(request, runtime.index, runtime.mode)
    for name, message in refused:
        log.append(
            RESOLVED_EVENT, {"skill": None, "source": "explicit", "refused": name, "reason": message}, agent=agent
        )
    if not chosen and not refused and provider is not None:
        eligible = [b for b in runtime.index.implicit(runtime.mode) if b.name not in runtime.loaded]
        decision = await resolve_skill(request, runtime.mode, eligible, provider)
        log.append(RESOLVED_EVENT, {**decision.to_json(), "source": "resolver"}, agent=agent)
        bundle = runtime.index.find(decision.skill, runtime.mode) if decision.skill else None
        if bundle is not None:
            try:
                chosen.append(activate(bundle, "resolver", runtime.available_tools))
            except ToolRejected as exc:
                log.append(RESOLVED_EVENT, {"skill": None, "source": "resolver", "reason": exc.message}, agent=agent)
    fresh = [a for a in chosen if runtime.loaded.get(a.name) != a.identity]
    for activation in fresh:
        record_activation(log, runtime, activation, request, agent)
    return fresh


def skills_for_run(
    surface: str, mode: AppMode, repos: Sequence[Path], home: Path | None, context_window: int | None
) -> SkillRuntime | None:
    """The skills of a run in ``mode``, or ``None`` when a Coding conversation takes no skills
    or no skill is available in the mode. Work sessions always take their own skills."""
    if surface == "conversation" and mode == "coding":
        return None
    runtime = session_runtime(repos, home, mode, context_window=context_window, persist_cache=True)
    return runtime if runtime.index.runtime(mode) else None


def resolver_enabled(choice: bool | None, profile: str, provider_name: str) -> bool:
    """Auto: the standard profile runs the resolver; the small profile relies on the bounded
    catalog (a sub-1B model's decision is noise), and a scripted model only when a test asks."""
    if choice is not None:
        return choice
    return profile == "standard" and provider_name != "scripted"
