"""The run's budgets, by prompt profile, in one place.

A small model spends seconds per call and rarely recovers from a loop, so the small profile
gets fewer model calls per run, fewer Architect steps per turn, shorter, fewer Coder windows, and
a time limit: a run that guided repair could not fix still ends with its report in minutes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from protoagent.agents.loop import DEFAULT_MODEL_CALLS
from protoagent.models.profile import PromptProfile
from protoagent.settings import environment


@dataclass(frozen=True, slots=True)
class RunLimits:
    model_calls: int
    """Model calls one run may make, shared by every agent."""
    lead_steps: int
    """Steps (model calls) of one lead (Architect) turn."""
    coder_window_calls: int
    """Model calls of one Coder work window."""
    coder_windows: int
    """Work windows of one Coder assignment (while each window makes new edits)."""
    seconds: float | None = None
    """Seconds from the run's start (model load included) after which it starts no model call
    (``None``: no time limit); the run then ends with its report."""
    tester_steps: int = 6
    """Steps of one Tester assignment."""
    question_steps: int = 8
    """Steps of a question surface's read-only turn."""
    verifier_steps: int = 8
    """Steps of a verification surface's turn."""
    conversation_steps: int = 1
    """Steps of a conversation turn (one answer, no tools)."""
    work_lead_steps: int = 30
    """Steps of one Work lead turn."""


STANDARD_LIMITS = RunLimits(model_calls=DEFAULT_MODEL_CALLS, lead_steps=16, coder_window_calls=9, coder_windows=3)
SMALL_LIMITS = RunLimits(model_calls=24, lead_steps=8, coder_window_calls=5, coder_windows=2, seconds=100.0)


def profile_limits(profile: PromptProfile) -> RunLimits:
    """The profile's own budgets, before a caller's or the environment's overrides."""
    return SMALL_LIMITS if profile == "small" else STANDARD_LIMITS


def limits_for(
    profile: PromptProfile, max_model_calls: int | None = None, environ: Mapping[str, str] | None = None
) -> RunLimits:
    """The profile's budgets; a caller's ``max_model_calls``, ``PROTOAGENT_CODER_MAX_WINDOWS``
    (clamped to 1–3) and ``PROTOAGENT_RUN_SECONDS`` (0 for no time limit) override the
    profile's; a value that is not a number is ignored."""
    limits = profile_limits(profile)
    if max_model_calls is not None:
        limits = replace(limits, model_calls=max_model_calls)
    env = environment(environ)
    if env.coder_windows is not None:
        limits = replace(limits, coder_windows=env.coder_windows)
    if env.run_seconds is not None:  # unset or not a number: the profile's limit stands
        limits = replace(limits, seconds=env.run_seconds if env.run_seconds > 0 else None)
    return limits
