"""Prompt caching on the Anthropic path, driven through the CLI against a local Messages API server.

The server speaks the Messages API's streaming format on loopback, records every request body,
answers the first request of the conversation with a ``read_file`` tool call and the next with
the final answer, and reports cache reads and writes in its usage as the real API does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from protoagent.models.anthropic import build_request
from protoagent.models.types import Message, ModelRequest, ToolCall, ToolSchema
from protoagent.testing import make_repo

EXE = [sys.executable, "-m", "protoagent"]
EPHEMERAL = {"type": "ephemeral"}


@dataclass
class MessagesServer:
    """What the local Messages API server was sent."""

    url: str
    bodies: list[dict[str, Any]] = field(default_factory=list)


def sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def tool_use_stream(path: str) -> bytes:
    usage = {"input_tokens": 40, "cache_creation_input_tokens": 1500, "cache_read_input_tokens": 0, "output_tokens": 1}
    return sse(
        [
            {"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                  "content": [], "model": "claude-x", "usage": usage}},
            {"type": "content_block_start", "index": 0,
             "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": json.dumps({"path": path})}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 12}},
            {"type": "message_stop"},
        ]
    )  # fmt: skip


def final_stream(text: str) -> bytes:
    usage = {"input_tokens": 25, "cache_creation_input_tokens": 60, "cache_read_input_tokens": 1500, "output_tokens": 1}
    return sse(
        [
            {"type": "message_start", "message": {"id": "msg_2", "type": "message", "role": "assistant",
                                                  "content": [], "model": "claude-x", "usage": usage}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
            {"type": "content_block_stop", "index": 0},
            # The closing usage repeats only the output count; the cache counts of message_start stand.
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 9}},
            {"type": "message_stop"},
        ]
    )  # fmt: skip


@pytest.fixture
def messages_server() -> Iterator[MessagesServer]:
    server_state = MessagesServer(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            server_state.bodies.append(body)
            blocks = [b for m in body["messages"] for b in m["content"]]
            answered = any(b.get("type") == "tool_result" for b in blocks)
            payload = (
                final_stream("parse_date is defined in dates.py line 1.") if answered else tool_use_stream("dates.py")
            )
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    server_state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield server_state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def marked(body: dict[str, Any]) -> list[str]:
    """Where the request carries ``cache_control``: ``system``, ``tool:NAME`` or ``message:I:J``."""
    places = [f"system:{i}" for i, b in enumerate(body.get("system", [])) if "cache_control" in b]
    places += [f"tool:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    for i, message in enumerate(body["messages"]):
        places += [f"message:{i}:{j}" for j, b in enumerate(message["content"]) if "cache_control" in b]
    return places


def run_cli(home: Path, repo: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PROTOAGENT_HOME": str(home),
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-local-test",
    }
    command = [*EXE, "run", "--model", "anthropic:claude-x", "--repo", str(repo), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_cli_run_marks_the_stable_prefix_and_reports_cached_tokens(
    tmp_path: Path, messages_server: MessagesServer
) -> None:
    repo = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    result = run_cli(
        tmp_path / "home", repo, messages_server.url, "--surface", "question", "--json", "where is parse_date defined?"
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["status"] == "completed", report

    first, second = messages_server.bodies[-2:]
    for body in (first, second):
        places = marked(body)
        assert len(places) <= 4, places
        assert places[0] == f"system:{len(body['system']) - 1}"
        assert f"tool:{body['tools'][-1]['name']}" in places
        assert sum(p.startswith("tool:") for p in places) == 1
        newest = len(body["messages"]) - 1
        assert f"message:{newest}:{len(body['messages'][newest]['content']) - 1}" in places
    # The second request marks where the first one ended, so it reads that prefix back exactly.
    ended = len(first["messages"]) - 1
    assert second["messages"][ended]["content"] == first["messages"][ended]["content"]
    assert f"message:{ended}:{len(first['messages'][ended]['content']) - 1}" in marked(second)
    # The stable prefix is byte-identical between the two requests.
    assert second["system"] == first["system"] and second["tools"] == first["tools"]

    # Both requests of the run: 40+1500 then 25+60+1500 input tokens, of which 1500 read from the cache.
    assert len(messages_server.bodies) == 2
    assert report["tokens"] == {"input": 1540 + 1585, "output": 12 + 9, "cached_input": 1500}


def test_a_first_request_marks_system_last_tool_and_newest_message_only() -> None:
    tools = tuple(ToolSchema(name, f"{name} tool", {"type": "object", "properties": {}}) for name in ("a", "b", "c"))
    body = build_request(ModelRequest(system="S", messages=(Message("user", "hi"),), tools=tools), "claude-x", 100)
    assert body["system"] == [{"type": "text", "text": "S", "cache_control": EPHEMERAL}]
    assert ["cache_control" in t for t in body["tools"]] == [False, False, True]
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": EPHEMERAL}]}
    ]


def test_a_long_conversation_never_exceeds_four_breakpoints() -> None:
    messages: list[Message] = [Message("user", "start")]
    for n in range(6):
        call = ToolCall(f"t{n}", "a", {})
        messages += [Message("assistant", f"step {n}", tool_calls=(call,)), Message("tool", "ok", tool_call_id=call.id)]
    tool = ToolSchema("a", "a tool", {"type": "object", "properties": {}})
    body = build_request(ModelRequest(system="S", messages=tuple(messages), tools=(tool,)), "claude-x", 100)
    places = marked(body)
    newest = len(body["messages"]) - 1
    assert places == ["system:0", "tool:a", f"message:{newest - 2}:0", f"message:{newest}:0"]


def test_no_system_and_no_tools_leaves_the_breakpoints_on_messages() -> None:
    body = build_request(ModelRequest(system="", messages=(Message("user", "hi"),)), "claude-x", 100)
    assert "system" not in body and "tools" not in body
    assert marked(body) == ["message:0:0"]


def test_a_resumed_run_reports_only_its_own_tokens(tmp_path: Path, messages_server: MessagesServer) -> None:
    repo = make_repo(tmp_path / "repo", {"dates.py": "def parse_date(text):\n    return text\n"})
    home = tmp_path / "home"
    first = run_cli(home, repo, messages_server.url, "--surface", "question", "--json", "where is parse_date?")
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    asked = len(messages_server.bodies)
    again = run_cli(
        home, repo, messages_server.url, "--resume", session_id, "--surface", "question", "--json", "and its line?"
    )
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    # The resumed history already holds a tool result, so the server answers at once: one request.
    assert len(messages_server.bodies) == asked + 1
    assert report["tokens"] == {"input": 1585, "output": 9, "cached_input": 1500}
    # The resumed request keeps the first run's prefix byte-stable and marks where it ended.
    resumed = messages_server.bodies[-1]
    assert resumed["system"] == messages_server.bodies[0]["system"]
    assert len(marked(resumed)) <= 4
