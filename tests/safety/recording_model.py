"""A loopback OpenAI-compatible server that records every request body and answers with one line."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _chunk(delta: dict[str, Any], finish: str | None) -> bytes:
    body = {
        "id": "rec",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(body)}\n\n".encode()


@contextmanager
def recording_model(answer: str = "done") -> Iterator[tuple[str, list[str]]]:
    """Yield ``(model spec, request bodies)``; each request is answered with ``answer`` and no tool call."""
    bodies: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            bodies.append(self.rfile.read(length).decode("utf-8", errors="replace"))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk({"role": "assistant", "content": answer}, None))
            self.wfile.write(_chunk({}, "stop"))
            self.wfile.write(b"data: [DONE]\n\n")

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"openai-compatible:http://127.0.0.1:{server.server_address[1]}/v1#m", bodies
    finally:
        server.shutdown()
        server.server_close()
