"""Real local servers for the provider tests: llama.cpp's OpenAI-compatible server and a tiny
HTTP server that answers with chosen errors. Both listen on loopback only."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context", "pydantic_settings")


@pytest.fixture(scope="session", autouse=True)
def probe_cache_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The embedded model's probe results go to a temporary data home, not the person's own."""
    if os.environ.get("PROTOAGENT_HOME"):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PROTOAGENT_HOME", str(tmp_path_factory.mktemp("home")))
        yield


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of ``python -m llama_cpp.server`` with the embedded model."""
    missing = [name for name in SERVER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        pytest.skip(f"llama.cpp server dependencies missing: {', '.join(missing)}")
    from protoagent.models import installed

    gguf = installed.embedded_gguf_path(installed.default_embedded())
    port = free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--n_ctx",
                "4096",
                "--model_alias",
                "embedded",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_until_ready(f"http://127.0.0.1:{port}/v1/models", process, log_path)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _wait_until_ready(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited early:\n{log_path.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"llama.cpp server did not answer {url} in time")


class ErrorHandler(BaseHTTPRequestHandler):
    """``POST /<status>/...`` answers with that status; ``/reset/...`` breaks the stream midway;
    ``/slow/...`` answers after two seconds."""

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_POST(self) -> None:
        try:
            self._answer()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up first (the timeout test)

    def _answer(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        kind = self.path.strip("/").split("/", 1)[0]
        if kind == "reset":
            self._broken_stream()
        elif kind == "slow":
            time.sleep(2)
            self._send(500, {}, {"error": {"message": "too late"}})
        else:
            self._send(int(kind), ERROR_HEADERS.get(int(kind), {}), ERROR_BODIES[int(kind)])

    def _send(self, status: int, headers: dict[str, str], body: object) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _broken_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        chunk = {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}],
        }
        event = f"data: {json.dumps(chunk)}\n\n".encode()
        self.wfile.write(f"{len(event):x}\r\n".encode() + event + b"\r\n")
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)


ERROR_HEADERS: dict[int, dict[str, str]] = {
    429: {"retry-after": "7"},
    503: {"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"},
    529: {"retry-after": "3"},
}
ERROR_BODIES: dict[int, object] = {
    400: {"error": {"message": "messages: field required", "type": "invalid_request_error"}},
    401: {"error": {"message": "Incorrect API key provided", "type": "authentication_error"}},
    403: {"error": {"message": "forbidden model", "type": "permission_error"}},
    404: {"error": {"message": "model not found", "type": "not_found_error"}},
    422: {"error": {"message": "unprocessable", "type": "invalid_request_error"}},
    429: {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}},
    500: {"error": {"message": "internal failure", "type": "api_error"}},
    503: {"error": {"message": "unavailable", "type": "api_error"}},
    529: {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
}


@pytest.fixture
def error_server() -> Iterator[str]:
    """Base URL of an in-process HTTP server on loopback that answers with errors."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ErrorHandler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
