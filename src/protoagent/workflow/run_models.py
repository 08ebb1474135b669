"""Which model answers each agent of a run.

The lead answers with the run's model (``--model``, or the SDK's ``model``/``provider``) when one
is given, else with its own agent file's ``model``, else with ``local``. A member whose file names
a ``model`` answers its assignments with that model; one that names none uses the lead's. A
relative path in an agent file's model spec (``scripted:turns.jsonl``, ``local:model.gguf``) is
read beside that file. A repository's agent file names a model only once the person trusts it
(``agents.trust``); until then its agent answers as if the file named none. Every provider is
resolved before the session is written, so a model that cannot be used stops the run with one
line and leaves nothing behind.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from protoagent.agents.compile import EffectiveAgent
from protoagent.errors import ConfigError
from protoagent.models.protocol import ModelProvider
from protoagent.models.registry import ModelConfig, resolve_model
from protoagent.workflow.run_options import RunOptions
from protoagent.workflow.team import RunTeam

DEFAULT_MODEL = "local"
"""The lead's model when neither the run nor the lead's file names one."""


@dataclass(frozen=True, slots=True)
class RunModels:
    spec: str
    """The lead's model spec, as the session records it."""
    lead: ModelProvider
    members: dict[str, ModelProvider]
    """Member name → its own provider (members that name no model are absent)."""


def run_models(options: RunOptions, team: RunTeam) -> RunModels:
    """Resolve the lead's provider and every member's own (``ConfigError`` naming the agent file)."""
    base = options.model_config
    owner = None if options.model or not team.lead.model else team.lead
    spec = options.model or team.lead.model or DEFAULT_MODEL
    lead = options.provider or _resolve(spec, owner, base)
    made: dict[tuple[str, object], ModelProvider] = {(spec, _config(base, owner).base_dir): lead}
    members: dict[str, ModelProvider] = {}
    for member in team.members:
        if member.model is None:
            continue
        config = _config(base, member)
        key = (member.model, config.base_dir)
        if key not in made:  # one provider per distinct model: a shared script keeps one order
            made[key] = _resolve(member.model, member, base)
        members[member.name] = made[key]
    return RunModels(spec, lead, members)


async def prepare_models(models: RunModels, data_home: Path | None = None) -> None:
    """Let each distinct provider get ready before the session is written, through its optional
    ``prepare`` method (the embedded model probes its build on this CPU and starts its worker;
    ``ConfigError`` when it cannot run here)."""
    seen: set[int] = set()
    for provider in (models.lead, *models.members.values()):
        prepare = getattr(provider, "prepare", None)
        if id(provider) not in seen and callable(prepare):
            seen.add(id(provider))
            await prepare(data_home)


def _config(base: ModelConfig, agent: EffectiveAgent | None) -> ModelConfig:
    if agent is None or agent.model_file is None:
        return base
    return replace(base, base_dir=agent.model_file.parent)


def _resolve(spec: str, agent: EffectiveAgent | None, base: ModelConfig) -> ModelProvider:
    try:
        return resolve_model(spec, _config(base, agent))
    except ConfigError as exc:
        if agent is None:
            raise
        where = agent.model_file or agent.agent_id
        raise ConfigError(f"{where}: its model {spec!r} cannot be used: {exc}") from None
