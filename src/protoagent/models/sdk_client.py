"""A hosted API's vendor SDK client: its options, its API key, and one client per event loop."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import Any

from protoagent.errors import ConfigError

DEFAULT_TIMEOUT_S = 600.0


def client_options(api_key: str, base_url: str | None, timeout: float | None, http_client: Any) -> dict[str, Any]:
    """The SDK client's options: no retries of its own (the agent loop owns retries), the timeout
    (``DEFAULT_TIMEOUT_S`` when not given) and a given httpx client (tests pass a recording one)."""
    options: dict[str, Any] = {
        "api_key": api_key,
        "base_url": base_url,
        "max_retries": 0,
        "timeout": timeout if timeout is not None else DEFAULT_TIMEOUT_S,
    }
    if http_client is not None:
        options["http_client"] = http_client
    return options


def spec_api_key(provider: str, rest: str, example: str, variable: str) -> str:
    """The API key for the ``provider:MODEL`` spec ``rest`` names, from the environment ``variable``;
    a spec without a model (``example`` shows one) or a missing key is a ``ConfigError``."""
    if not rest:
        raise ConfigError(f"model spec {provider!r} needs a model name, for example {provider + ':' + example!r}")
    key = os.environ.get(variable)
    if not key:
        raise ConfigError(f"model {provider + ':' + rest!r} needs an API key: set {variable}")
    return key


class LoopBoundClient:
    """One vendor SDK client per event loop: an SDK client keeps connections bound to the loop
    that opened them, so a provider used from a new loop (a new ``asyncio.run``) needs a new one."""

    def __init__(self, factory: Callable[[], Any]) -> None:
        self._factory = factory
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._factory()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        """Close the SDK client and its connections."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
