"""Asking an OpenAI-compatible server for its context window, without side effects.

The probe reads only what a server documents as read-only, in this order:

1. ``GET /props`` — llama.cpp's server (``default_generation_settings.n_ctx``);
2. Ollama's ``POST /api/show`` (``num_ctx`` in its parameters, or ``model_info``
   ``*.context_length``), but only once the server is known to be Ollama: its URL names it (port
   11434, or ``ollama`` in the host name), or ``GET /api/version`` or ``GET /api/tags`` answers as
   Ollama does. Any other server gets GET requests only, never a POST it might act on.

The sequence is written once (``_probe_steps``, a generator of requests that receives each
answer) and driven either synchronously (``probe_context_window``, for ``protoagent models``) or
asynchronously (``detect_context_window``), so a run can be stopped mid-probe at once instead
of waiting for a stalled server. Both never raise: a server that says nothing keeps the window
unknown, and the whole probe ends within ``PROBE_BUDGET_S``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

PROBE_TIMEOUT_S = 2.0
"""Seconds one probe request may take."""
PROBE_BUDGET_S = 4.0
"""Seconds the whole probe may take, however many requests it makes."""
OLLAMA_PORT = 11434


@dataclass(frozen=True, slots=True)
class ProbeRequest:
    """One request of the probe; only ``/api/show`` on a known Ollama server is a POST."""

    method: Literal["GET", "POST"]
    url: str
    body: dict[str, Any] | None = field(default=None)


ProbeSteps = Generator[ProbeRequest, Any, int | None]
"""Yields the next request, receives the JSON of a 200 answer (``None`` for anything else),
returns the window."""


def server_root(base_url: str) -> str:
    """The server's root: the base URL without a trailing ``/v1``."""
    return re.sub(r"/v\d+/?$", "", base_url.rstrip("/"))


def named_ollama(base_url: str) -> bool:
    """Whether the URL itself says Ollama: its default port, or ``ollama`` in the host name."""
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError:
        return False
    return port == OLLAMA_PORT or "ollama" in (parts.hostname or "")


def probe_context_window(base_url: str, model: str, timeout: float = PROBE_TIMEOUT_S) -> int | None:
    """The server's context window, asked synchronously; None when it does not say."""
    steps = _probe_steps(base_url, model)
    deadline = time.monotonic() + PROBE_BUDGET_S
    step: ProbeRequest | int | None = next(steps)
    try:
        with httpx.Client() as client:
            while isinstance(step, ProbeRequest):
                left = min(timeout, deadline - time.monotonic())
                if left <= 0:
                    return None
                response = client.request(step.method, step.url, json=step.body, timeout=left)
                step = _advance(steps, _answer(response))
    except (httpx.HTTPError, httpx.InvalidURL):
        return None
    return step


async def detect_context_window(base_url: str, model: str) -> int | None:
    """The server's context window, asked without blocking the event loop: cancelling the caller
    (a stop signal) ends the probe at once."""
    steps = _probe_steps(base_url, model)
    deadline = time.monotonic() + PROBE_BUDGET_S
    step: ProbeRequest | int | None = next(steps)
    try:
        async with httpx.AsyncClient() as client:
            while isinstance(step, ProbeRequest):
                left = min(PROBE_TIMEOUT_S, deadline - time.monotonic())
                if left <= 0:
                    return None
                response = await client.request(step.method, step.url, json=step.body, timeout=left)
                step = _advance(steps, _answer(response))
    except (httpx.HTTPError, httpx.InvalidURL):
        return None
    return step


def _advance(steps: ProbeSteps, answer: Any) -> ProbeRequest | int | None:
    """The probe's next request, or its result once it has one."""
    try:
        return steps.send(answer)
    except StopIteration as done:
        return _window(done.value)


def _probe_steps(base_url: str, model: str) -> ProbeSteps:
    root = server_root(base_url)
    window = _llama_cpp_window((yield ProbeRequest("GET", f"{root}/props")))
    if window is not None:
        return window
    if not named_ollama(base_url) and not _answers_as_ollama((yield ProbeRequest("GET", f"{root}/api/version"))):
        if not _lists_ollama_models((yield ProbeRequest("GET", f"{root}/api/tags"))):
            return None
    return _ollama_window((yield ProbeRequest("POST", f"{root}/api/show", {"model": model})))


def _answer(response: httpx.Response) -> Any:
    """The JSON of a 200 answer; None for another status or a body that is not JSON."""
    if response.status_code != 200:
        return None
    try:
        return response.json()
    except ValueError:
        return None


def _window(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _llama_cpp_window(data: Any) -> int | None:
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    return _window(settings.get("n_ctx") if isinstance(settings, dict) else data.get("n_ctx"))


def _answers_as_ollama(data: Any) -> bool:
    """``GET /api/version`` on Ollama: ``{"version": "0.6.2"}``."""
    return isinstance(data, dict) and isinstance(data.get("version"), str)


def _lists_ollama_models(data: Any) -> bool:
    """``GET /api/tags`` on Ollama: ``{"models": [...]}``."""
    return isinstance(data, dict) and isinstance(data.get("models"), list)


def _ollama_window(data: Any) -> int | None:
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
            if key.endswith(".context_length") and _window(value) is not None:
                return int(value)
    return None
