"""Cancelling a model request to a server that never answers ends it at once, for both HTTP
providers: a stop signal cancels the run's task, and the request must not wait for the SDK's
timeout. The server is a real HTTP server on loopback that takes the request and stays silent."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from protoagent.models.anthropic import AnthropicProvider
from protoagent.models.openai_compat import OpenAICompatProvider
from protoagent.models.types import Message, ModelRequest


class SilentServer:
    """Reads each request, says it arrived, and never answers until closed."""

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._closing = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requested.set()
                owner._closing.wait(60)

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def silent_server() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.close()


def provider_for(kind: str, server: SilentServer) -> OpenAICompatProvider | AnthropicProvider:
    if kind == "anthropic":
        return AnthropicProvider(model="claude-test", api_key="test-key", base_url=server.root)
    return OpenAICompatProvider(name="openai-compatible", model="m", api_key=None, base_url=f"{server.root}/v1")


@pytest.mark.parametrize("kind", ["openai-compatible", "anthropic"])
def test_cancelling_a_request_to_a_silent_server_ends_it_at_once(kind: str, silent_server: SilentServer) -> None:
    provider = provider_for(kind, silent_server)
    request = ModelRequest(system="You answer.", messages=(Message(role="user", content="hello"),))

    async def consume() -> None:
        async for _ in provider.stream(request):
            pass

    async def cancel_once_requested() -> float:
        streaming = asyncio.ensure_future(consume())
        while not silent_server.requested.is_set():
            assert not streaming.done(), streaming.exception()
            await asyncio.sleep(0.02)
        cancelled = time.monotonic()
        streaming.cancel()
        with pytest.raises(asyncio.CancelledError):
            await streaming
        elapsed = time.monotonic() - cancelled
        await provider.aclose()
        return elapsed

    # The SDK's own timeout is 600 s; a request that ignored cancellation would wait for it.
    assert asyncio.run(asyncio.wait_for(cancel_once_requested(), 30)) < 5.0
