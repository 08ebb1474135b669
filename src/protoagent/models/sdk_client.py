"""``LoopBoundClient``: a vendor SDK client per event loop."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any


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
