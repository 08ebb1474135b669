"""``compile_agent_config``: the one merge of a definition with its code-owned profile.

The runtime, the CLI and the SDK all call it, so what ``agents show`` prints is what a run uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protoagent.agents.definition import AgentDefinition, AgentRole, AgentSource, AppMode, model_problem
from protoagent.agents.profiles import DEFAULT_LEADS, INTERNAL_MEMBERS, base_of, profile_for
from protoagent.agents.roster import AgentRoster
from protoagent.errors import ConfigError
from protoagent.json_form import json_form


@dataclass(frozen=True, slots=True)
class EffectiveAgent:
    """An agent's effective configuration: what the runtime composes it from."""

    agent_id: str
    name: str
    mode: AppMode
    role: AgentRole
    lead: str | None
    """The lead a member serves (resolved to the mode's default lead when the file names none)."""
    description: str
    model: str | None
    tools: tuple[str, ...]
    skills: tuple[str, ...]
    mcp_servers: tuple[str, ...]
    prompt: str
    source: AgentSource
    path: Path | None
    model_file: Path | None = None
    """The file ``model`` comes from (relative paths in it are read beside it); ``path`` unless an
    ignored repository model fell back to the person's own file."""
    ignored: tuple[str, ...] = ()
    """Fields of a repository file that do not count until the person trusts them, one line each."""
    instructions: str = ""
    """The file's own prompt text, added to the built-in prompt of whichever surface a lead runs."""

    def to_json(self) -> dict[str, Any]:
        return json_form(self, rename={"agent_id": "id"}, omit=("model_file", "instructions"))


def compile_agent_config(definition: AgentDefinition) -> EffectiveAgent:
    """Profile → user tools, skills, MCP servers and prompt → ``tools_opt_out`` on tier tools → dedupe.

    A field the file leaves out keeps the code-owned profile's value (an override naming only
    ``model`` or ``tools_opt_out`` keeps the built-in description)."""
    prompt, tier = base_of(definition)
    profile = profile_for(definition.mode, definition.name)
    user_file = definition.source != "builtin"
    if user_file and definition.prompt:
        prompt = f"{prompt}\n\n{definition.prompt}" if prompt else definition.prompt
    kept_tier = tuple(t for t in tier if t not in definition.tools_opt_out)
    extra = definition.tools if user_file else ()
    lead = None if definition.role == "lead" else (definition.lead or DEFAULT_LEADS[definition.mode])
    return EffectiveAgent(
        agent_id=definition.agent_id,
        name=definition.name,
        mode=definition.mode,
        role=definition.role,
        lead=lead,
        description=definition.description or (profile.description if profile is not None else ""),
        model=definition.model,
        tools=tuple(dict.fromkeys((*kept_tier, *extra))),
        skills=tuple(dict.fromkeys(definition.skills)),
        mcp_servers=tuple(dict.fromkeys(definition.mcp_servers)),
        prompt=prompt,
        source=definition.source,
        path=definition.path,
        model_file=definition.model_file or definition.path,
        ignored=definition.ignored,
        instructions=definition.prompt if user_file else "",
    )


def select_lead(catalog: AgentRoster, mode: AppMode, name: str | None) -> EffectiveAgent:
    """The lead of a run: ``name`` (a ``role: lead`` agent of ``mode``) or the mode's default."""
    definition = catalog.find(name or DEFAULT_LEADS[mode], mode)
    if definition.role != "lead":
        leads = ", ".join(d.name for d in catalog.in_mode(mode) if d.role == "lead")
        raise ConfigError(f"agent {definition.agent_id!r} is a member, not a lead; choose one of: {leads}")
    return check_model(compile_agent_config(definition))


def check_model(agent: EffectiveAgent) -> EffectiveAgent:
    """Refuse an agent a run would use whose ``model`` cannot name a model (before anything is written)."""
    problem = model_problem(agent.model) if agent.model else None
    if problem is not None:
        where = agent.model_file or agent.agent_id
        raise ConfigError(f"{where}: {problem}; fix its 'model' field ('protoagent agents validate' lists problems)")
    return agent


def team_of(
    catalog: AgentRoster, lead: EffectiveAgent, disabled: frozenset[str] = frozenset()
) -> tuple[EffectiveAgent, ...]:
    """The members ``lead`` may delegate to: bound to it by name (or by default), enabled, not internal."""
    members = []
    for definition in catalog.in_mode(lead.mode):
        if definition.role != "member" or definition.agent_id in disabled or definition.name in disabled:
            continue
        if definition.source == "builtin" and definition.name in INTERNAL_MEMBERS and lead.mode == "coding":
            continue
        effective = compile_agent_config(definition)
        if effective.lead == lead.name:
            members.append(check_model(effective))
    return tuple(members)
