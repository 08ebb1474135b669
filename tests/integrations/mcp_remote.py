"""A local MCP server over Streamable HTTP or SSE, written with the SDK's server side."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REMOTE_SERVER = '''
import sys

from mcp.server.mcpserver import Context, MCPServer

transport, port = sys.argv[1], int(sys.argv[2])
app = MCPServer("remote")
count = 0


@app.tool()
def increment() -> int:
    """Count calls in this server process."""
    global count
    count += 1
    return count


@app.tool()
def token(ctx: Context) -> str:
    """The Authorization header the client sent."""
    return (ctx.headers or {}).get("authorization", "(none)")


@app.resource("notes://readme")
def readme() -> str:
    """The project's notes."""
    return "remember the milk"


@app.prompt()
def review(path: str) -> str:
    """Review one file."""
    return f"Please review {path} carefully."


if transport == "sse":
    app.run("sse", host="127.0.0.1", port=port)
else:
    app.run("streamable-http", host="127.0.0.1", port=port)
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def remote_server(tmp_path: Path, transport: str) -> Iterator[str]:
    """Start the server on a free 127.0.0.1 port; yields its URL and stops it afterwards."""
    script = tmp_path / f"remote_{transport}.py"
    script.write_text(REMOTE_SERVER, encoding="utf-8")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(script), transport, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        path = "/sse" if transport == "sse" else "/mcp"
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        process.wait(timeout=10)
