"""The agent read routes and the one agent setting write, shared by the CLI, the SDK and servers.

Every read here is pure: listing, showing and validating agents create or change no file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protoagent.agents.compile import EffectiveAgent, compile_agent_config
from protoagent.agents.definition import AppMode
from protoagent.agents.roster import AgentProblem, AgentRoster, load_catalog, read_agent_file
from protoagent.agents.trust import AgentTrust, widening_fields
from protoagent.errors import ConfigError
from protoagent.settings import disabled_agents, set_agent


def list_agents(mode: AppMode | None, repo: Path | None, home: Path | None) -> list[dict[str, Any]]:
    """Each visible agent: id, name, mode, role, lead, source, description, path, enabled."""
    return _rows(load_catalog(repo, home), mode, home)


def agent_listing(mode: AppMode | None, repo: Path | None, home: Path | None) -> dict[str, Any]:
    """``{"agents": rows, "diagnostics": [...]}``: every visible agent, and every file left out
    (``error``) or whose untrusted fields are ignored (``warning``), like ``skills list``."""
    catalog = load_catalog(repo, home)
    return {"agents": _rows(catalog, mode, home), "diagnostics": diagnostics(catalog)}


def diagnostics(catalog: AgentRoster) -> list[dict[str, str]]:
    errors = [{"path": str(p.path), "problem": str(p), "severity": "error"} for p in catalog.problems]
    notes = [
        {"path": str(d.path), "problem": line, "severity": "warning"} for d in catalog.definitions for line in d.ignored
    ]
    return errors + notes


def _rows(catalog: AgentRoster, mode: AppMode | None, home: Path | None) -> list[dict[str, Any]]:
    off = disabled_agents(home)
    rows = []
    for definition in catalog.in_mode(mode):
        effective = compile_agent_config(definition)
        row = {
            key: value
            for key, value in effective.to_json().items()
            if key in ("id", "name", "mode", "role", "lead", "source", "description", "path")
        }
        row["enabled"] = effective.agent_id not in off and effective.name not in off
        rows.append(row)
    return rows


def show_agent(name: str, mode: AppMode | None, repo: Path | None, home: Path | None) -> EffectiveAgent:
    """The compiled effective config of one agent (``ConfigError`` if unknown)."""
    return compile_agent_config(load_catalog(repo, home).find(name, mode))


def validate_agents(repo: Path | None, home: Path | None) -> list[AgentProblem]:
    """Every invalid agent file (empty when all are valid)."""
    return list(load_catalog(repo, home).problems)


def agent_notices(repo: Path | None, home: Path | None) -> list[str]:
    """Fields of valid repository files that are ignored until the person trusts them."""
    return list(load_catalog(repo, home).notices)


def untrusted_in_team(repo: Path, home: Path | None, lead: str | None) -> list[EffectiveAgent]:
    """The agents a Coding run led by ``lead`` would use whose repository fields are ignored until
    trusted (empty when the team cannot be composed: the run reports that itself)."""
    from protoagent.agents.compile import select_lead, team_of

    catalog = load_catalog(repo, home)
    try:
        chosen = select_lead(catalog, "coding", lead)
        team = (chosen, *team_of(catalog, chosen, disabled_agents(home)))
    except ConfigError:
        return []
    return [agent for agent in team if agent.ignored]


def trust_agent(home: Path, name: str, repo: Path) -> dict[str, Any]:
    """Trust the ``model`` and ``tools`` a repository's agent file names now, exactly as written;
    returns what was trusted. A changed value is ignored again until it is trusted again."""
    definition = load_catalog(repo, home).find(name)
    if definition.source != "project" or definition.path is None:
        raise ConfigError(
            f"{definition.agent_id!r} is not a file of repository {str(repo)!r} (its source is {definition.source}); "
            "only files under .protoagent/agents need trust"
        )
    raw = read_agent_file(definition.path, definition.mode, definition.source)
    fields = widening_fields(raw)
    trust = AgentTrust(home)
    for field, value in fields.items():
        trust.trust(repo, raw.agent_id, field, value)
    return {
        "agent": raw.agent_id,
        "repository": str(repo.resolve()),
        "trusted": {k: v if isinstance(v, str) else list(v) for k, v in fields.items()},
    }


def set_agent_enabled(home: Path, name: str, enabled: bool, repo: Path | None = None) -> str:
    """Turn an agent on or off in the user's settings; returns the id that was set."""
    catalog = load_catalog(repo, home)
    known = frozenset(d.agent_id for d in catalog.definitions)
    agent_id = name if name in known else catalog.find(name).agent_id
    # Optional agents keep their historical settings keys (``tester``, ``scout``, ``mcp``).
    key = agent_id.removeprefix("coding/") if agent_id in ("coding/tester", "coding/scout", "coding/mcp") else agent_id
    set_agent(home, key, enabled, known)
    return agent_id
