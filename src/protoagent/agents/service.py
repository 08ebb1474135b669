"""The agent read routes and the one agent setting write, shared by the CLI, the SDK and servers.

Every read here is pure: listing, showing and validating agents create or change no file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from protoagent.agents.catalog import AgentProblem, load_catalog
from protoagent.agents.compile import EffectiveAgent, compile_agent_config
from protoagent.agents.definition import AppMode
from protoagent.settings import disabled_agents, set_agent


def list_agents(mode: AppMode | None, repo: Path | None, home: Path | None) -> list[dict[str, Any]]:
    """Each visible agent: id, name, mode, role, lead, source, description, path, enabled."""
    catalog = load_catalog(repo, home)
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


def set_agent_enabled(home: Path, name: str, enabled: bool, repo: Path | None = None) -> str:
    """Turn an agent on or off in the user's settings; returns the id that was set."""
    catalog = load_catalog(repo, home)
    known = frozenset(d.agent_id for d in catalog.definitions)
    agent_id = name if name in known else catalog.find(name).agent_id
    # Optional agents keep their historical settings keys (``tester``, ``scout``, ``mcp``).
    key = agent_id.removeprefix("coding/") if agent_id in ("coding/tester", "coding/scout", "coding/mcp") else agent_id
    set_agent(home, key, enabled, known)
    return agent_id
