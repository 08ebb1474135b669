"""Through the CLI on the standard profile (a loopback OpenAI-compatible model): the implicit
skill resolver's round trip is made only when some eligible skill is plausible for the request,
and a skipped one is recorded, so an audit sees why no resolver request was made."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.app.support import cli as _cli

from protoagent.skills.resolver import RESOLVER_SYSTEM, SKIPPED_REASON
from protoagent.testing import make_repo

SELECTION = '{"skill": "code-review", "confidence": 0.9}'


def _chunk(content: str | None, finish: str | None) -> bytes:
    delta = {"role": "assistant", "content": content} if content is not None else {}
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "m", "object": "chat.completion.chunk", "created": 0, "model": "m", "choices": [choice]}
    return f"data: {json.dumps(body)}\n\n".encode()


@contextmanager
def _model() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """A model endpoint that picks code-review when asked as the resolver and otherwise answers
    in one line; every request body is kept."""
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            bodies.append(body)
            resolver = body["messages"][0]["content"] == RESOLVER_SYSTEM
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk(SELECTION if resolver else "Nothing to change.", None))
            self.wfile.write(_chunk(None, "stop") + b"data: [DONE]\n\n")

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"openai-compatible:http://127.0.0.1:{server.server_address[1]}/v1#m", bodies
    finally:
        server.shutdown()
        server.server_close()


def _run(tmp_path: Path, objective: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The request bodies the model received and the session's events."""
    repo = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    home = tmp_path / "home"
    with _model() as (spec, bodies):
        run = _cli(home, "run", "--model", spec, "--repo", str(repo), "--approval", "auto", "--json", objective)
    report = json.loads(run.stdout)
    shown = _cli(home, "sessions", "show", report["session_id"], "--json")
    return bodies, json.loads(shown.stdout)["events"]


def _resolver_bodies(bodies: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in bodies if b["messages"][0]["content"] == RESOLVER_SYSTEM]


def test_no_resolver_request_when_no_skill_is_plausible(tmp_path: Path) -> None:
    bodies, events = _run(tmp_path, "rename parse_date to parse_iso_date and update its callers")
    assert bodies and not _resolver_bodies(bodies)
    (resolved,) = [e for e in events if e["type"] == "skill.resolved"]
    assert resolved["payload"] == {
        "skill": None,
        "confidence": 0.0,
        "reason": SKIPPED_REASON,
        "skipped": True,
        "source": "resolver",
    }
    assert not [e for e in events if e["type"] == "skill.activated"]


def test_a_request_naming_a_review_still_gets_the_resolver(tmp_path: Path) -> None:
    bodies, events = _run(tmp_path, "review this change")
    (resolver,) = _resolver_bodies(bodies)
    assert "code-review" in resolver["messages"][1]["content"]
    (resolved,) = [e for e in events if e["type"] == "skill.resolved"]
    assert resolved["payload"]["skill"] == "code-review" and "skipped" not in resolved["payload"]
    activated = [e["payload"]["activation"] for e in events if e["type"] == "skill.activated"]
    assert [(a["name"], a["trigger"]) for a in activated] == [("code-review", "resolver")]
