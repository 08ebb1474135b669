"""Streamable HTTP and SSE servers (the SDK's server side, on 127.0.0.1) through the broker."""

from __future__ import annotations

from pathlib import Path

import pytest

from protoagent.tools.pipeline import ToolPipeline, ToolResult

from .mcp_remote import remote_server
from .mcp_support import Demo, call, session

pytest.importorskip("mcp", reason="the MCP broker needs the mcp SDK (protoagent[mcp])")


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["http", "sse"])
def test_a_remote_server_keeps_one_session_and_gets_the_headers(
    tmp_path: Path, transport: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REMOTE_TOKEN", "s3cret")
    demo = Demo(tmp_path)
    with remote_server(tmp_path, transport) as url:
        entry = {"type": transport, "url": url, "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"}, "trusted": True}
        demo.write("data_home", {"mcpServers": {"remote": entry}})
        pipeline = demo.pipeline("auto")

        async def body(p: ToolPipeline) -> list[ToolResult]:
            listed = await call(p, "list_mcp_tools", "c0", server="remote")
            assert listed.status == "ok", listed.output
            calls = [await call(p, "call_mcp_tool", f"c{n}", server="remote", tool="increment") for n in (1, 2)]
            token = await call(p, "call_mcp_tool", "c3", server="remote", tool="token")
            readme = await call(p, "mcp_resources", "c4", server="remote", uri="notes://readme")
            review = await call(p, "mcp_prompts", "c5", server="remote", name="review", arguments={"path": "x.py"})
            return [*calls, token, readme, review]

        first, second, token, readme, review = session(pipeline, body)
    assert [first.output.splitlines()[-1], second.output.splitlines()[-1]] == ["1", "2"]
    assert token.output.splitlines()[-1] == "Bearer s3cret"
    assert readme.output.endswith("\nremember the milk") and review.output.endswith("\nPlease review x.py carefully.")
    broker = pipeline.env.services.mcp_broker
    assert broker is not None and broker.starts == {"remote": 1}
