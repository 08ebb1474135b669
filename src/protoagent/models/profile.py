"""Which prompt profile a model gets: ``small`` (compact protocol, JSON actions, tight budgets) or
``standard`` (native tool calls), and the context window admission should use.

``auto`` picks ``small`` for the embedded model and for any server whose context window is
16k tokens or less, read from the server where it says (``window_probe``: llama.cpp's
``GET /props``, Ollama's ``/api/show`` once the server is known to be Ollama). The choice never
depends on a provider's name alone. A run uses ``detect_profile``, which asks the server without
blocking the event loop, so a stop signal during the probe ends the run at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from protoagent.models.window_probe import probe_context_window

__all__ = [
    "DetectsContextWindow",
    "KnowsContextWindow",
    "ProfileChoice",
    "choose_profile",
    "detect_profile",
    "probe_context_window",
]

PromptProfile = Literal["small", "standard"]
ProfileRequest = Literal["auto", "small", "standard"]
ActionMode = Literal["native", "json"]

SMALL_WINDOW_MAX = 16 * 1024
"""A detected window at or under this many tokens gets the small profile under ``auto``."""


@runtime_checkable
class KnowsContextWindow(Protocol):
    """A provider that can say its context window (optional ability)."""

    def context_window(self) -> int | None: ...


@runtime_checkable
class DetectsContextWindow(Protocol):
    """A provider that asks a server for its window asynchronously and remembers the answer
    (optional ability); ``context_window`` then returns it without asking again."""

    async def detect_context_window(self) -> int | None: ...


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    profile: PromptProfile
    action_mode: ActionMode
    window: int | None
    """The detected (or configured) context window in tokens; None when unknown."""
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "action_mode": self.action_mode, "window": self.window, "reason": self.reason}


def choose_profile(
    provider: object, requested: ProfileRequest = "auto", configured: int | None = None
) -> ProfileChoice:
    """The profile for ``provider``: as ``requested``, or under ``auto`` by its context window."""
    window = configured
    source = "configured"
    if window is None and isinstance(provider, KnowsContextWindow):
        window = provider.context_window()
        source = "reported by the model"
    embedded = getattr(provider, "name", "") == "local"
    if requested != "auto":
        return ProfileChoice(requested, _mode(requested), window, f"--profile {requested}")
    if embedded:
        return ProfileChoice("small", "json", window, "the embedded model is small")
    if window is not None and window <= SMALL_WINDOW_MAX:
        return ProfileChoice("small", "json", window, f"context window {window} tokens ({source}) is 16k or less")
    why = f"context window {window} tokens ({source})" if window is not None else "no small context window detected"
    return ProfileChoice("standard", "native", window, why)


def _mode(profile: PromptProfile) -> ActionMode:
    return "json" if profile == "small" else "native"


async def detect_profile(
    provider: object, requested: ProfileRequest = "auto", configured: int | None = None
) -> ProfileChoice:
    """``choose_profile``, after asking the provider's server for its window without blocking the
    event loop (cancelling the caller ends the probe at once)."""
    if configured is None and isinstance(provider, DetectsContextWindow):
        await provider.detect_context_window()
    return choose_profile(provider, requested, configured)
