"""The context-window probe has no side effects and never holds up a run: an OpenAI-compatible
server gets GET requests only, Ollama's POST /api/show goes only to a server known to be Ollama,
and probing a stalled server leaves the event loop free (a stop signal ends it at once).
Servers here are real HTTP servers on loopback that record every request they receive."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from protoagent.models.profile import detect_profile
from protoagent.models.registry import ModelConfig, resolve_model
from protoagent.models.window_probe import detect_context_window, named_ollama, probe_context_window

Route = tuple[str, str]
PROPS = {"default_generation_settings": {"n_ctx": 8192}, "total_slots": 1}
OLLAMA_SHOW = {"parameters": "num_ctx                        4096", "model_info": {"llama.context_length": 131072}}
OPENAI_MODELS = {"object": "list", "data": [{"id": "m", "object": "model"}]}


class RecordingServer:
    """Answers ``routes`` with JSON (404 otherwise), records (method, path) of every request, and
    never answers the paths in ``stall`` until it is closed."""

    def __init__(self, routes: dict[Route, Any], stall: frozenset[Route] = frozenset()) -> None:
        self.received: list[Route] = []
        self.stalled = threading.Event()
        self._closing = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler(routes, stall))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self, routes: dict[Route, Any], stall: frozenset[Route]) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                route = (self.command, self.path)
                owner.received.append(route)
                if route in stall:
                    owner.stalled.set()
                    owner._closing.wait(60)
                    return
                body = routes.get(route)
                data = b"" if body is None else json.dumps(body).encode()
                self.send_response(404 if body is None else 200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _answer
            do_POST = _answer

            def log_message(self, *args: object) -> None:
                return

        return Handler


@pytest.fixture
def serve() -> Iterator[Callable[..., RecordingServer]]:
    servers: list[RecordingServer] = []

    def start(routes: dict[Route, Any], stall: frozenset[Route] = frozenset()) -> RecordingServer:
        servers.append(RecordingServer(routes, stall))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def probe_sync(url: str) -> int | None:
    return probe_context_window(url, "m")


def probe_async(url: str) -> int | None:
    return asyncio.run(detect_context_window(url, "m"))


DRIVERS = pytest.mark.parametrize("probe", [probe_sync, probe_async], ids=["sync", "async"])


@DRIVERS
def test_a_plain_openai_compatible_server_receives_get_requests_only(
    serve: Callable[..., RecordingServer], probe: Callable[[str], int | None]
) -> None:
    server = serve({("GET", "/v1/models"): OPENAI_MODELS})
    assert probe(server.url) is None
    assert server.received == [("GET", "/props"), ("GET", "/api/version"), ("GET", "/api/tags")]


@DRIVERS
def test_a_llama_cpp_server_is_asked_its_props_and_nothing_else(
    serve: Callable[..., RecordingServer], probe: Callable[[str], int | None]
) -> None:
    server = serve({("GET", "/props"): PROPS})
    assert probe(server.url) == 8192
    assert server.received == [("GET", "/props")]


@DRIVERS
def test_ollama_is_asked_api_show_once_api_version_says_it_is_ollama(
    serve: Callable[..., RecordingServer], probe: Callable[[str], int | None]
) -> None:
    server = serve({("GET", "/api/version"): {"version": "0.6.2"}, ("POST", "/api/show"): OLLAMA_SHOW})
    assert probe(server.url) == 4096
    assert server.received == [("GET", "/props"), ("GET", "/api/version"), ("POST", "/api/show")]


def test_ollama_is_recognised_by_its_model_list_when_it_has_no_version_route(
    serve: Callable[..., RecordingServer],
) -> None:
    show = {"model_info": {"qwen2.context_length": 32768}}
    server = serve({("GET", "/api/tags"): {"models": []}, ("POST", "/api/show"): show})
    assert probe_sync(server.url) == 32768
    assert ("POST", "/api/show") in server.received


def test_an_answer_that_only_resembles_ollama_brings_no_post(serve: Callable[..., RecordingServer]) -> None:
    server = serve({("GET", "/api/version"): {"version": 2}, ("GET", "/api/tags"): ["a", "b"]})
    assert probe_sync(server.url) is None
    assert all(method == "GET" for method, _ in server.received)


def test_an_ollama_url_is_recognised_by_its_port_or_host_name() -> None:
    assert named_ollama("http://127.0.0.1:11434/v1")
    assert named_ollama("http://ollama.internal:8000/v1")
    assert not named_ollama("http://127.0.0.1:8080/v1")
    assert not named_ollama("http://127.0.0.1:notaport/v1")


def test_probing_a_stalled_server_leaves_the_event_loop_free_and_stops_when_cancelled(
    serve: Callable[..., RecordingServer],
) -> None:
    server = serve({}, stall=frozenset({("GET", "/props")}))
    provider = resolve_model(f"openai-compatible:{server.url}#m", ModelConfig())

    async def probe_then_cancel() -> tuple[float, float]:
        probe = asyncio.ensure_future(detect_profile(provider))
        widest_gap, last = 0.0, time.monotonic()
        while not server.stalled.is_set():
            await asyncio.sleep(0.02)
            now = time.monotonic()
            widest_gap, last = max(widest_gap, now - last), now
        cancelled = time.monotonic()
        probe.cancel()
        with pytest.raises(asyncio.CancelledError):
            await probe
        return widest_gap, time.monotonic() - cancelled

    widest_gap, to_stop = asyncio.run(probe_then_cancel())
    # A probe that blocked the loop would hold it for its whole 2 s request timeout.
    assert widest_gap < 1.0
    assert to_stop < 1.0
