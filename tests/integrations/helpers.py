"""Helpers for the integration tests: a real HTTP server on 127.0.0.1 and a pipeline around tools."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from protoagent.events import MemoryStore, SessionLog
from protoagent.tools.approvals import Answerer, ApprovalService, Policy
from protoagent.tools.base import AnyTool
from protoagent.tools.pipeline import ToolEnvironment, ToolPipeline
from protoagent.tools.registry import ToolRegistry
from protoagent.tools.services import RunServices

PAGE = (
    """<!doctype html><html><head><title>Release notes</title>
<style>body { color: red }</style><script>window.secret = "<p>not text</p>";</script></head>
<body><h1>Version 2.0</h1><p>The   parser is <b>faster</b>
 now &amp; safer.</p><ul><li>first</li><li>second</li></ul>
"""
    + "<p>filler paragraph</p>\n" * 400
    + "</body></html>"
)
HUGE_BYTES = 5 * 1024 * 1024


class LocalWeb:
    """What the local server saw: one path per request."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.requests: list[str] = []
        self.lock = threading.Lock()

    def url(self, path: str) -> str:
        return self.base + path


def _handler(web: LocalWeb) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            with web.lock:
                web.requests.append(self.path)
            split = urlsplit(self.path)
            query = parse_qs(split.query).get("q", [""])[0]
            routes: dict[str, Callable[[], None]] = {
                "/page.html": lambda: self._send(200, "text/html; charset=utf-8", PAGE.encode()),
                "/data.json": lambda: self._send(200, "application/json", b'{"name": "protoagent", "stars": 3}'),
                "/image.png": lambda: self._send(200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8),
                "/missing": lambda: self._send(404, "text/plain", b"no such page"),
                "/huge.txt": self._huge,
                "/search": lambda: self._search(query, searx=False),
                "/searx": lambda: self._search(query, searx=True),
                "/redirect-page": lambda: self._redirect("/page.html"),
                "/redirect-private": lambda: self._redirect("http://169.254.169.254/latest/meta-data/"),
            }
            routes.get(split.path, lambda: self._send(404, "text/plain", b"unknown route"))()

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _redirect(self, location: str) -> None:
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _huge(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(HUGE_BYTES))
            self.end_headers()
            chunk = b"x" * 65536
            try:
                for _ in range(HUGE_BYTES // len(chunk)):
                    self.wfile.write(chunk)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client stopped reading at its cap

        def _search(self, query: str, *, searx: bool) -> None:
            hits = [
                {"title": f"{query} result {n}", "url": f"https://example.org/{n}", "snippet": f"about {query} {n}"}
                for n in range(1, 8)
            ]
            if searx:
                payload: Any = {"results": [{**h, "content": h.pop("snippet")} for h in hits]}
            else:
                payload = hits
            self._send(200, "application/json", json.dumps(payload).encode())

    return Handler


@contextmanager
def local_web() -> Iterator[LocalWeb]:
    """A real HTTP server on 127.0.0.1 (a free port) for as long as the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    web = LocalWeb(f"http://127.0.0.1:{server.server_address[1]}")
    server.RequestHandlerClass = _handler(web)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield web
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def make_pipeline(
    root: Path,
    tools: Sequence[AnyTool],
    policy: Policy = "auto",
    services: RunServices | None = None,
    answerer: Answerer | None = None,
) -> ToolPipeline:
    log = SessionLog(MemoryStore(), "s")
    log.append("session.created", {"preset": "t", "model": "scripted", "root": str(root), "approval_policy": policy})
    env = ToolEnvironment(root, services=services or RunServices())
    return ToolPipeline(ToolRegistry(tools), ApprovalService(policy, answerer), log, env)


def event_types(pipeline: ToolPipeline) -> list[str]:
    return [event.type for event in pipeline.log.events]
