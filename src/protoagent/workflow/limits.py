"""The run's budgets, by prompt profile, in one place.

A small model spends seconds per call and rarely recovers from a loop, so the small profile
gets fewer model calls per run, fewer Architect steps per turn, shorter, fewer Coder windows, and
a time limit: a run that guided repair could not fix still ends with its report in minutes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from protoagent.agents.loop import DEFAULT_MODEL_CALLS
from protoagent.tools.base import Profile

WINDOWS_ENV = "PROTOAGENT_CODER_MAX_WINDOWS"
SECONDS_ENV = "PROTOAGENT_RUN_SECONDS"


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


def profile_limits(profile: Profile) -> RunLimits:
    """The profile's own budgets, before a caller's or the environment's overrides."""
    return SMALL_LIMITS if profile == "small" else STANDARD_LIMITS


def limits_for(
    profile: Profile, max_model_calls: int | None = None, environ: dict[str, str] | None = None
) -> RunLimits:
    """The profile's budgets; a caller's ``max_model_calls``, ``PROTOAGENT_CODER_MAX_WINDOWS``
    (clamped to 1–3) and ``PROTOAGENT_RUN_SECONDS`` (0 for no time limit) override the
    profile's; a value that is not a number is ignored."""
    limits = profile_limits(profile)
    if max_model_calls is not None:
        limits = replace(limits, model_calls=max_model_calls)
    raw = (environ if environ is not None else os.environ).get(WINDOWS_ENV)
    if raw is not None and raw.strip().lstrip("-").isdigit():
        limits = replace(limits, coder_windows=max(1, min(3, int(raw))))
    seconds = (environ if environ is not None else os.environ).get(SECONDS_ENV, "").strip()
    try:
        limits = replace(limits, seconds=float(seconds) if float(seconds) > 0 else None)
    except ValueError:
        pass  # unset or not a number: the profile's limit stands
    return limits
