"""Roles are data: a prompt, the exact tools, limits and the profile they run with.

Every role is built from the one role table (``agents.profiles``: prompts, descriptions, tools)
and the run's budgets (``workflow.limits``); this module holds no role data of its own. A user's
agent file adds to a role through ``compile_agent_config``.
"""

from __future__ import annotations

from collections.abc import Sequence

from protoagent.agents.presets import Preset
from protoagent.agents.profiles import (
    ARCHITECT,
    BATCHING,
    CODER,
    CONVERSATION_PROMPT,
    EXPLORER,
    PROFILES,
    TESTER,
    VERIFIER,
)
from protoagent.models.profile import PromptProfile
from protoagent.models.types import ActionMode
from protoagent.workflow.contract import Surface
from protoagent.workflow.limits import profile_limits

BUILTIN = {p.name: p for p in PROFILES if p.mode == "coding"}
ARCHITECT_TOOLS = BUILTIN[ARCHITECT].tools
CODER_TOOLS = BUILTIN[CODER].tools
TESTER_TOOLS = BUILTIN[TESTER].tools
REVIEW_NOTE = "If no check measures a criterion, a closing review request follows."
"""How a run with ``review_criteria`` ends (``workflow.closing``): told only to a lead that has it."""


def with_review(prompt: str, tools: Sequence[str]) -> str:
    """The lead's prompt, told of the closing review request when its tools include ``review_criteria``."""
    if "review_criteria" not in tools or REVIEW_NOTE in prompt:
        return prompt
    return f"{prompt.rstrip()} {REVIEW_NOTE}"


def with_batching(name: str, prompt: str, profile: PromptProfile, mode: ActionMode) -> str:
    """The role's prompt, told that one turn may carry several sequential calls (standard profile)."""
    hint = BATCHING.get(name)
    if hint is None or profile == "small" or mode != "native" or hint in prompt:
        return prompt
    return f"{prompt.rstrip()} {hint}"


def _preset(
    name: str, prompt: str, tools: tuple[str, ...], steps: int, profile: PromptProfile, mode: ActionMode
) -> Preset:
    return Preset(name, prompt, tools, max_steps=steps, profile=profile, action_mode=mode)


def architect(profile: PromptProfile, mode: ActionMode, tester_enabled: bool = True) -> Preset:
    tools = ARCHITECT_TOOLS if tester_enabled else tuple(t for t in ARCHITECT_TOOLS if t != TESTER)
    if profile == "small":
        # A small model's review of a diff is no evidence worth a tool schema in an 8k window.
        tools = tuple(t for t in tools if t != "review_criteria")
    prompt = with_review(with_batching(ARCHITECT, BUILTIN[ARCHITECT].prompt, profile, mode), tools)
    return _preset(ARCHITECT, prompt, tools, profile_limits(profile).lead_steps, profile, mode)


def coder(profile: PromptProfile, mode: ActionMode) -> Preset:
    """Coder's ``max_steps`` is one work window: the profile's ``coder_window_calls``."""
    prompt = with_batching(CODER, BUILTIN[CODER].prompt, profile, mode)
    return _preset(CODER, prompt, CODER_TOOLS, profile_limits(profile).coder_window_calls, profile, mode)


def tester(profile: PromptProfile, mode: ActionMode) -> Preset:
    return _preset(TESTER, BUILTIN[TESTER].prompt, TESTER_TOOLS, profile_limits(profile).tester_steps, profile, mode)


def question(profile: PromptProfile, mode: ActionMode) -> Preset:
    """The question surface: Explorer's read-only prompt and tools under the lead."""
    explorer = BUILTIN[EXPLORER]
    return _preset("question", explorer.prompt, explorer.tools, profile_limits(profile).question_steps, profile, mode)


def conversation(profile: PromptProfile, mode: ActionMode) -> Preset:
    steps = profile_limits(profile).conversation_steps
    return _preset("conversation", CONVERSATION_PROMPT, (), steps, profile, mode)


def verifier(profile: PromptProfile, mode: ActionMode) -> Preset:
    verifier = BUILTIN[VERIFIER]
    return _preset(VERIFIER, verifier.prompt, verifier.tools, profile_limits(profile).verifier_steps, profile, mode)


def for_surface(surface: Surface, profile: PromptProfile, mode: ActionMode, tester_enabled: bool = True) -> Preset:
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
