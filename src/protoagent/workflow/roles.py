"""Roles are data: a prompt, the exact tools, limits and the profile they run with.

Prompts and descriptions are the code-owned agent profiles (``agents.profiles``); a user's agent
file adds to them through ``compile_agent_config``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from protoagent.agents.presets import READ_TOOLS, Preset
from protoagent.agents.profiles import CODE_NAVIGATION, PROFILES
from protoagent.models.types import ActionMode
from protoagent.tools.base import Profile
from protoagent.workflow.contract import Surface
from protoagent.workflow.limits import STANDARD_LIMITS, limits_for

BUILTIN = {p.name: p for p in PROFILES if p.mode == "coding"}
WINDOW_MODEL_CALLS = STANDARD_LIMITS.coder_window_calls
"""Coder stops before the tenth provider call of a standard-profile inference window."""

CONVERSATION_PROMPT = "You are ProtoAgent, a coding assistant. Answer briefly and plainly; no tools are available."
ARCHITECT_TOOLS = BUILTIN["architect"].tools
CODER_TOOLS = BUILTIN["coder"].tools
TESTER_TOOLS = BUILTIN["tester"].tools
BATCHING = {
    "architect": "Calls in one turn run in order (coder, then run_check).",
    "coder": "Calls in one turn run in order and stop at a denial: e.g. edit_file then report_task.",
}
"""What native tool calling lets a role do in one turn (a small model's JSON action is one call)."""
REVIEW_NOTE = "If a criterion no check measures remains, one closing review request follows that verify."
"""How a run with ``review_criteria`` ends (``workflow.closing``): told only to a lead that has it."""


def with_review(prompt: str, tools: Sequence[str]) -> str:
    """The lead's prompt, told of the closing review request when its tools include ``review_criteria``."""
    if "review_criteria" not in tools or REVIEW_NOTE in prompt:
        return prompt
    return f"{prompt.rstrip()} {REVIEW_NOTE}"


def with_batching(name: str, prompt: str, profile: Profile, mode: ActionMode) -> str:
    """The role's prompt, told that one turn may carry several sequential calls (standard profile)."""
    hint = BATCHING.get(name)
    if hint is None or profile == "small" or mode != "native" or hint in prompt:
        return prompt
    return f"{prompt.rstrip()} {hint}"


def architect(profile: Profile, mode: ActionMode, tester_enabled: bool = True) -> Preset:
    tools = ARCHITECT_TOOLS if tester_enabled else tuple(t for t in ARCHITECT_TOOLS if t != "tester")
    if profile == "small":
        # A small model's review of a diff is no evidence worth a tool schema in an 8k window.
        tools = tuple(t for t in tools if t != "review_criteria")
    prompt = with_review(with_batching("architect", BUILTIN["architect"].prompt, profile, mode), tools)
    return Preset("architect", prompt, tools, max_steps=16, profile=profile, action_mode=mode)


def coder(profile: Profile, mode: ActionMode) -> Preset:
    """Coder's ``max_steps`` is one work window: the profile's ``coder_window_calls``."""
    steps = limits_for(profile).coder_window_calls
    prompt = with_batching("coder", BUILTIN["coder"].prompt, profile, mode)
    return Preset("coder", prompt, CODER_TOOLS, max_steps=steps, profile=profile, action_mode=mode)


def tester(profile: Profile, mode: ActionMode) -> Preset:
    return Preset("tester", BUILTIN["tester"].prompt, TESTER_TOOLS, max_steps=6, profile=profile, action_mode=mode)


def question(profile: Profile, mode: ActionMode) -> Preset:
    tools = (*READ_TOOLS, *CODE_NAVIGATION)
    return Preset("question", BUILTIN["explorer"].prompt, tools, max_steps=8, profile=profile, action_mode=mode)


def conversation(profile: Profile, mode: ActionMode) -> Preset:
    return Preset("conversation", CONVERSATION_PROMPT, (), max_steps=1, profile=profile, action_mode=mode)


def verifier(profile: Profile, mode: ActionMode) -> Preset:
    return Preset(
        "verifier",
        BUILTIN["verifier"].prompt,
        BUILTIN["verifier"].tools,
        max_steps=8,
        profile=profile,
        action_mode=mode,
    )


def for_surface(surface: Surface, profile: Profile, mode: ActionMode, tester_enabled: bool = True) -> Preset:
    """The built-in role a Coding lead runs on ``surface`` (before its own config applies)."""
    match surface:
        case "conversation":
            return conversation(profile, mode)
        case "question":
            return question(profile, mode)
        case "verification":
            return verifier(profile, mode)
        case _:
            return architect(profile, mode, tester_enabled)


def with_steps(preset: Preset, steps: int) -> Preset:
    return replace(preset, max_steps=steps)
