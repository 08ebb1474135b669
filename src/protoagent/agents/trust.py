"""Which fields of a repository's agent files the person has trusted, kept in the data home.

A repository's agent files (``REPO/.protoagent/agents``) are untrusted: their ``model`` would
send the conversation (and the provider's key) to an endpoint the repository chose, and their
``tools`` could hand a role tools its code-owned profile does not give it. Such a field counts
only once the person trusts it with ``protoagent agents trust NAME --repo DIR``; the answer is
remembered in ``<data home>/agent-trust.json`` for that repository, that agent and that exact
value, so a changed value is ignored again until it is trusted again. The person's own agent
files (``<data home>/agents``) are trusted as they are. Writes are atomic under a lock.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from filelock import FileLock

from protoagent.agents.definition import AgentDefinition
from protoagent.agents.profiles import READ_TOOLS, base_of
from protoagent.atomic_files import replace_file
from protoagent.errors import ConfigError
from protoagent.events.catalog import AgentsDiagnostics
from protoagent.events.queries import facts
from protoagent.events.types import Event

TRUST_FILE = "agent-trust.json"
TrustedField = Literal["model", "tools"]


def _value(value: str | Sequence[str]) -> str:
    return value if isinstance(value, str) else json.dumps(list(value))


class AgentTrust:
    """Trusted (repository, agent id, field, exact value) entries."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / TRUST_FILE if home is not None else None

    @staticmethod
    def key(repo: Path, agent_id: str, field: TrustedField, value: str | Sequence[str]) -> str:
        return f"{repo.resolve()}\0{agent_id}\0{field}\0{_value(value)}"

    def trusted(self, repo: Path, agent_id: str, field: TrustedField, value: str | Sequence[str]) -> bool:
        return self.path is not None and self.key(repo, agent_id, field, value) in self._read().get("trusted", {})

    def trust(self, repo: Path, agent_id: str, field: TrustedField, value: str | Sequence[str]) -> None:
        """Remember that the person trusts this field of this repository's agent as it is now."""
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with FileLock(str(self.path) + ".lock"):
                data = self._read()
                entries = data.setdefault("trusted", {})
                entries[self.key(repo, agent_id, field, value)] = {
                    "repository": str(repo.resolve()),
                    "agent": agent_id,
                    "field": field,
                    "value": value if isinstance(value, str) else list(value),
                }
                replace_file(self.path, json.dumps(data, indent=2) + "\n")
        except OSError as exc:
            problem = exc.strerror or exc
            raise ConfigError(f"{self.path}: cannot record the trust ({problem}); fix the data home") from None

    def _read(self) -> dict[str, Any]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # unreadable trust is no trust: the fields stay ignored
        return data if isinstance(data, dict) and isinstance(data.get("trusted", {}), dict) else {}


def untrusted_ceiling(definition: AgentDefinition) -> tuple[str, ...]:
    """The tools a repository file may name without trust: its code-owned tier, and reading."""
    return tuple(dict.fromkeys((*base_of(definition)[1], *READ_TOOLS)))


def restrict_untrusted(
    definition: AgentDefinition, below: AgentDefinition | None, repo: Path, trust: AgentTrust
) -> AgentDefinition:
    """A repository file's definition with its untrusted widening fields ignored, each with a
    one-line note. An ignored ``model`` falls back to the person's own file for the same agent."""
    notes: list[str] = []
    model, tools, model_file = definition.model, definition.tools, definition.model_file
    hint = f"trust it with: protoagent agents trust {definition.agent_id} --repo {repo}"
    if model is not None and not trust.trusted(repo, definition.agent_id, "model", model):
        fallback = below if below is not None and below.source == "user" else None
        model = fallback.model if fallback is not None else None
        model_file = fallback.model_file or fallback.path if fallback is not None else None
        notes.append(
            f"{definition.path}: model {definition.model!r} ignored: a repository agent file does not choose "
            f"the model, endpoint or key; {hint}"
        )
    ceiling = untrusted_ceiling(definition)
    wider = [t for t in tools if t not in ceiling]
    if wider and not trust.trusted(repo, definition.agent_id, "tools", tools):
        tools = tuple(t for t in tools if t in ceiling)
        notes.append(
            f"{definition.path}: tool(s) {', '.join(wider)} ignored: a repository agent file adds only tools "
            f"its code-owned profile allows; {hint}"
        )
    if not notes:
        return definition
    ignored = (*definition.ignored, *notes)
    return replace(definition, model=model, model_file=model_file, tools=tools, ignored=ignored)


def widening_fields(definition: AgentDefinition) -> dict[TrustedField, str | tuple[str, ...]]:
    """The fields of a repository file that need trust to count, with their exact values."""
    fields: dict[TrustedField, str | tuple[str, ...]] = {}
    if definition.model is not None:
        fields["model"] = definition.model
    if any(t not in untrusted_ceiling(definition) for t in definition.tools):
        fields["tools"] = definition.tools
    return fields


DIAGNOSTICS_EVENT = "agents.diagnostics"
"""Recorded once by a run whose agents have ignored repository fields; they become report notes."""


def ignored_notes(events: Iterable[Event]) -> list[str]:
    """The ignored repository agent fields a run recorded, as report notes."""
    return [f"agents: {line}" for _, found in facts(events, AgentsDiagnostics) for line in found.diagnostics]
