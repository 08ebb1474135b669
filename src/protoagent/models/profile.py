"""Which prompt profile a model gets: ``small`` (compact protocol, JSON actions, tight budgets) or
``standard`` (native tool calls), and the context window admission should use.

``auto`` picks ``small`` for the embedded model and for any server whose context window is
16k tokens or less, read from the server where it says: llama.cpp's ``GET /props``
(``default_generation_settings.n_ctx``) and Ollama's ``POST /api/show`` (``model_info``
``*.context_length``, or ``num_ctx`` in its parameters). The choice never depends on a
provider's name alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import httpx

Profile = Literal["small", "standard"]
ProfileRequest = Literal["auto", "small", "standard"]
ActionMode = Literal["native", "json"]

SMALL_WINDOW_MAX = 16 * 1024
"""A detected window at or under this many tokens gets the small profile under ``auto``."""
PROBE_TIMEOUT_S = 2.0


@runtime_checkable
class KnowsContextWindow(Protocol):
    """A provider that can say its context window (optional ability)."""

    def context_window(self) -> int | None: ...


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    profile: Profile
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


def _mode(profile: Profile) -> ActionMode:
    return "json" if profile == "small" else "native"


def probe_context_window(base_url: str, model: str, timeout: float = PROBE_TIMEOUT_S) -> int | None:
    """Ask an OpenAI-compatible server for its context window: llama.cpp, then Ollama; None when
    neither answers. Never raises: a server that says nothing keeps the window unknown."""
    root = re.sub(r"/v\d+/?$", "", base_url.rstrip("/"))
    try:
        with httpx.Client(timeout=timeout) as client:
            return _llama_cpp_window(client, root) or _ollama_window(client, root, model)
    except (httpx.HTTPError, ValueError):
        return None


def _llama_cpp_window(client: httpx.Client, root: str) -> int | None:
    response = client.get(f"{root}/props")
    if response.status_code != 200:
        return None
    data = response.json()
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else data.get("n_ctx")
    return n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None


def _ollama_window(client: httpx.Client, root: str, model: str) -> int | None:
    response = client.post(f"{root}/api/show", json={"model": model})
    if response.status_code != 200:
        return None
    data = response.json()
    if not isinstance(data, dict):
        return None
    parameters = data.get("parameters")
    if isinstance(parameters, str):
        match = re.search(r"^num_ctx\s+(\d+)", parameters, re.M)
        if match:
            return int(match.group(1))
    info = data.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if key.endswith(".context_length") and isinstance(value, int) and value > 0:
                return value
    return None
