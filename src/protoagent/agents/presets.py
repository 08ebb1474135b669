"""Presets: the model-independent composition of an agent (prompt, tools, limits, hooks).

The built-in presets' prompts and tools are rows of the one role table (``agents.profiles``)."""

from __future__ import annotations

from dataclasses import dataclass

from protoagent.agents.profiles import PRESET_ROWS
from protoagent.errors import ConfigError
from protoagent.models.profile import PromptProfile
from protoagent.models.types import ActionMode


@dataclass(frozen=True, slots=True)
class Preset:
    """What an agent is composed of for one session."""

    name: str
    system_prompt: str
    tools: tuple[str, ...]
    max_steps: int = 30
    """Model calls allowed in one turn before the turn ends with a limit."""
    profile: PromptProfile = "standard"
    action_mode: ActionMode = "native"
    hooks: tuple[str, ...] = ()
    """Names of before-model hooks to mount (resolved by the session builder)."""


BUILTIN_PRESETS: dict[str, Preset] = {
    name: Preset(name, prompt, tools) for name, (prompt, tools) in PRESET_ROWS.items()
}


def get_preset(name: str, extra: dict[str, Preset] | None = None) -> Preset:
    presets = {**BUILTIN_PRESETS, **(extra or {})}
    preset = presets.get(name)
    if preset is None:
        raise ConfigError(f"unknown preset {name!r}; choose one of: {', '.join(sorted(presets))}")
    if preset.max_steps < 1:
        raise ConfigError(f"preset {name!r} is broken: max_steps must be at least 1")
    return preset
