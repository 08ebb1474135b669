"""Presets: the model-independent composition of an agent (prompt, tools, limits, hooks)."""

from __future__ import annotations

from dataclasses import dataclass

from protoagent.agents.profiles import COMMAND_TOOLS, READ_TOOLS, WRITE_TOOLS
from protoagent.errors import ConfigError
from protoagent.models.profile import PromptProfile
from protoagent.models.types import ActionMode

CODING_PROMPT = (
    "You are ProtoAgent, a careful coding agent working in a real repository. "
    "Use the tools to read before you change anything. Edit with edit_file using exact old text "
    "copied from read_file and its revision. Keep changes small and focused on the objective. "
    "When the work is done, reply with a short summary and no tool call."
)
READONLY_PROMPT = (
    "You are ProtoAgent answering questions about a repository. You may only read: "
    "use read_file, list_directory and search_regex, then answer with evidence (paths and lines)."
)
CHAT_PROMPT = "You are ProtoAgent, a coding assistant. Answer briefly and plainly."


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
    "coding": Preset("coding", CODING_PROMPT, READ_TOOLS + WRITE_TOOLS + COMMAND_TOOLS),
    "readonly": Preset("readonly", READONLY_PROMPT, READ_TOOLS),
    "chat": Preset("chat", CHAT_PROMPT, ()),
}


def get_preset(name: str, extra: dict[str, Preset] | None = None) -> Preset:
    presets = {**BUILTIN_PRESETS, **(extra or {})}
    preset = presets.get(name)
    if preset is None:
        raise ConfigError(f"unknown preset {name!r}; choose one of: {', '.join(sorted(presets))}")
    if preset.max_steps < 1:
        raise ConfigError(f"preset {name!r} is broken: max_steps must be at least 1")
    return preset
