"""The surface classifier asks for exactly what its schema allows, with room to say it, and a
real OpenAI-compatible endpoint receives that schema instead of the action protocol."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from protoagent.models.anthropic import build_request as anthropic_request
from protoagent.models.registry import resolve_model
from protoagent.workflow.contract import (
    ROUTER_MAX_TOKENS,
    ROUTER_PROMPT,
    ROUTER_SCHEMA,
    SURFACES,
    router_request,
    select_contract,
)

UNRULED = "the parser and the printer"
"""An objective no deterministic rule classifies, so the model decides."""


class RecordingServer:
    """A chat-completions endpoint on loopback that streams one fixed reply and keeps every body."""

    def __init__(self, reply: str) -> None:
        self.bodies: list[dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                recorder.bodies.append(json.loads(self.rfile.read(length)))
                chunks = [
                    {
                        "choices": [
                            {"index": 0, "delta": {"role": "assistant", "content": reply}, "finish_reason": None}
                        ]
                    },
                    {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                ]
                head = {"id": "r", "object": "chat.completion.chunk", "created": 0, "model": "m"}
                stream = "".join(f"data: {json.dumps({**head, **c})}\n\n" for c in chunks)
                data = (stream + "data: [DONE]\n\n").encode()
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                return

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> RecordingServer:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def router_server() -> Iterator[RecordingServer]:
    with RecordingServer('{"surface": "question"}') as server:
        yield server


def test_router_prompt_schema_and_token_budget_agree() -> None:
    request = router_request(UNRULED)
    surfaces = ROUTER_SCHEMA["properties"]["surface"]["enum"]  # type: ignore[index]
    assert list(surfaces) == list(SURFACES)
    assert all(f'"{s}"' in ROUTER_PROMPT for s in SURFACES) and '{"surface": S}' in ROUTER_PROMPT
    assert ROUTER_SCHEMA["required"] == ["surface"] and ROUTER_SCHEMA["additionalProperties"] is False
    longest = max((json.dumps({"surface": s}, indent=2) for s in SURFACES), key=len)
    fenced = f"```json\n{longest}\n```"
    assert request.max_output_tokens == ROUTER_MAX_TOKENS >= len(fenced)  # even at one token per character
    assert request.output_schema == ROUTER_SCHEMA and request.action_mode == "json"


def test_router_request_reaches_an_openai_compatible_endpoint_as_its_schema(router_server: RecordingServer) -> None:
    provider = resolve_model(f"openai-compatible:{router_server.url}#m")
    contract = asyncio.run(select_contract(UNRULED, provider=provider))
    assert (contract.surface, contract.source) == ("question", "model")
    body = router_server.bodies[0]
    assert body["messages"][0] == {"role": "system", "content": ROUTER_PROMPT}
    assert ROUTER_SCHEMA in (
        body["response_format"].get("schema"),
        body["response_format"].get("json_schema", {}).get("schema"),
    )
    assert body["max_tokens"] == ROUTER_MAX_TOKENS
    assert '"type": "final"' not in json.dumps(body) and "tool_call" not in json.dumps(body)


def test_router_request_to_anthropic_carries_no_action_protocol() -> None:
    body = anthropic_request(router_request(UNRULED), "claude", 1024)
    assert [block["text"] for block in body["system"]] == [ROUTER_PROMPT]
    assert body["max_tokens"] == ROUTER_MAX_TOKENS
    assert '"type": "final"' not in json.dumps(body) and "tools" not in body
