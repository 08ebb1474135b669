"""The application side of a run: its mode, workspace, lead and the lead's team.

A new run selects these (``--mode``, ``--repo``, ``--agent``); a resumed run reads them from
the session's log and refuses any request that would migrate it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from protoagent.agents.compile import EffectiveAgent, compile_agent_config, select_lead, team_of
from protoagent.agents.definition import AppMode
from protoagent.agents.modes import SessionFacts, check_resume, new_workspace, session_facts
from protoagent.agents.presets import Preset
from protoagent.agents.profiles import ARCHITECT, ARCHITECT_TIER, SPECIALISED_MEMBERS
from protoagent.agents.roster import load_catalog
from protoagent.errors import ConfigError
from protoagent.events.store import SessionStore
from protoagent.hooks.compact_protocol import WorkerCard
from protoagent.models.profile import PromptProfile
from protoagent.settings import disabled_agents
from protoagent.skills.discovery import load_skills
from protoagent.skills.tool import SkillTool
from protoagent.tools.base import AnyTool
from protoagent.workflow.contract import Surface
from protoagent.workflow.delegation import delegate_tools, worker_cards
from protoagent.workflow.limits import profile_limits
from protoagent.workflow.roles import for_surface, with_batching, with_review

NARROWING_SURFACES = ("question", "conversation")
"""Roles of the surfaces that narrow a Coding lead: their tools are the most it may have there."""


@dataclass(frozen=True, slots=True)
class RunTeam:
    mode: AppMode
    root: Path
    lead: EffectiveAgent
    members: tuple[EffectiveAgent, ...]
    resumed: SessionFacts | None = None

    @property
    def lead_agent(self) -> str:
        """The agent name the lead runs as: a Work lead's own name; every Coding lead is the Architect."""
        return self.lead.name if self.mode == "work" else ARCHITECT

    def delegate_tools(self) -> list[AnyTool]:
        return delegate_tools(self.members, self.lead_agent)

    def cards(self) -> tuple[WorkerCard, ...]:
        return worker_cards(self.members)

    def has_member(self, name: str) -> bool:
        return any(m.name == name for m in self.members)


def resumed_facts(store: SessionStore, session_id: str) -> SessionFacts:
    """The persisted facts of a session to continue (``SessionLoadError`` if it cannot load)."""
    return session_facts(session_id, store.load(session_id))


def check_tools(agents: Sequence[EffectiveAgent], available: set[str]) -> None:
    """Every tool an agent's effective config names must exist in this run."""
    for agent in agents:
        missing = [t for t in agent.tools if t not in available]
        if missing:
            where = agent.path or agent.agent_id
            raise ConfigError(f"{where}: unknown tool(s) {', '.join(missing)}; remove them from 'tools'")


def assemble_team(
    *,
    repo: Path,
    mode: AppMode | None,
    agent: str | None,
    resumed: SessionFacts | None,
    data_home: Path | None,
    tester: bool = True,
) -> RunTeam:
    """Select (or, on resume, restore) the mode, workspace, lead and team of a run."""
    if resumed is not None:
        # A Work session's folder is its own; only a Coding session is bound to a repository.
        check_resume(resumed, mode, repo if resumed.mode == "coding" else None, agent)
        mode, root = resumed.mode, resumed.root
        agent = resumed.lead
    else:
        mode = mode or "coding"
        root = repo
    catalog = load_catalog(root if mode == "coding" else None, data_home)
    lead = select_lead(catalog, mode, agent)
    off = disabled_agents(data_home) | (frozenset() if tester else frozenset({"tester"}))
    members = team_of(catalog, lead, off)
    if resumed is None and mode == "work":
        root = new_workspace(data_home)
    return RunTeam(mode, root, lead, members, resumed)


def lead_role(team: RunTeam, role: Preset) -> Preset:
    """The lead's role for this run: its compiled prompt and tools plus its team's delegates.

    A Work lead is wholly its compiled config; the Coding workflow's Architect role keeps its
    workflow tools, offering ``coder``/``tester`` only when they are members of the lead's team.
    """
    delegates = tuple(t.name for t in team.delegate_tools())
    if team.mode == "coding" and role.name in NARROWING_SURFACES:
        # The surface's own prompt with the lead file's text, and the lead's tools it allows.
        tools = tuple(t for t in role.tools if t in team.lead.tools)
        instructions = team.lead.instructions.strip()
        prompt = f"{role.system_prompt}\n\n{instructions}" if instructions else role.system_prompt
        return replace(role, system_prompt=prompt, tools=tools)
    if team.mode == "work":
        return Preset(
            team.lead.name,
            team.lead.prompt,
            tuple(dict.fromkeys((*team.lead.tools, *delegates))),
            max_steps=profile_limits(role.profile).work_lead_steps,
            profile=role.profile,
            action_mode=role.action_mode,
        )
    if role.name != ARCHITECT:
        return role
    opted_out = set(ARCHITECT_TIER) - set(team.lead.tools)
    kept = tuple(t for t in role.tools if t not in opted_out and (t not in SPECIALISED_MEMBERS or team.has_member(t)))
    added = tuple(t for t in team.lead.tools if t not in ARCHITECT_TIER)
    tools = tuple(dict.fromkeys((*kept, *added, *delegates)))
    prompt = with_review(with_batching(role.name, team.lead.prompt, role.profile, role.action_mode), tools)
    return replace(role, system_prompt=prompt, tools=tools)


def lead_on_surface(
    name: str, surface: Surface, repo: Path, home: Path | None, profile: PromptProfile = "standard"
) -> EffectiveAgent:
    """What Coding lead ``name`` runs on ``surface``, composed as a run composes it (``lead_role``,
    plus the ``skill`` tool when the run would have skills): its tools and prompt there. Pure."""
    catalog = load_catalog(repo, home)
    definition = catalog.find(name, "coding")
    if definition.role != "lead":
        raise ConfigError(f"{definition.agent_id!r} is a member and runs only on assignments; drop --surface")
    lead = compile_agent_config(definition)
    team = RunTeam("coding", repo, lead, team_of(catalog, lead, disabled_agents(home)))
    role = lead_role(team, for_surface(surface, profile, "native", team.has_member("tester")))
    tools = role.tools
    skills = load_skills([repo], home)  # the tool only when the lead may load one (offered_skill_tool)
    if surface != "conversation" and (skills.implicit("coding") or (lead.skills and skills.runtime("coding"))):
        tools = (*tools, SkillTool.name)
    return replace(lead, tools=tuple(dict.fromkeys(tools)), prompt=role.system_prompt)
