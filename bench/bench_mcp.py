"""MCP call latency per transport: the first call of a run (start + initialize + call) and later calls.

Method. One small server written with the ``mcp`` SDK's ``MCPServer`` (a tool ``echo``) is run
over stdio (started by the broker), Streamable HTTP and SSE (started once beforehand on a free
127.0.0.1 port; its start-up is not counted). For each transport a fresh ``MCPBroker`` (one per
run, as ``run_task`` makes it) measures, with ``time.perf_counter`` inside one event loop:

* first call: ``list_tools`` + ``call_tool("echo")`` on a server this broker has not used yet
  (for stdio this includes spawning the process and the MCP initialization; for HTTP and SSE,
  connecting and initializing a session), repeated over ``ROUNDS`` fresh brokers;
* later call: ``call_tool("echo")`` on the session kept by the broker, ``CALLS`` times.

Also prints the old cost model for comparison: ``CALLS`` later calls × the first-call median is
what a process-per-call broker paid. Prints median and 90th percentile in milliseconds.
Run: ``python bench/bench_mcp.py``.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from protoagent.integrations.mcp_broker import MCPBroker
from protoagent.integrations.mcp_config import MCPServerSpec

ROUNDS = 5
CALLS = 30
SERVER = """
import sys
from mcp.server.mcpserver import MCPServer

app = MCPServer("bench")


@app.tool()
def echo(text: str) -> str:
    \"\"\"Echo the text back.\"\"\"
    return text


if len(sys.argv) > 1:
    app.run(sys.argv[1], host="127.0.0.1", port=int(sys.argv[2]))
else:
    app.run("stdio")
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise SystemExit(f"the bench server on port {port} did not start")


async def measure(spec: MCPServerSpec, root: Path) -> tuple[list[float], list[float]]:
    firsts: list[float] = []
    laters: list[float] = []
    for _ in range(ROUNDS):
        broker = MCPBroker({spec.name: spec}, root)
        try:
            start = time.perf_counter()
            await broker.list_tools(spec.name)
            await broker.call_tool(spec.name, "echo", {"text": "hi"})
            firsts.append((time.perf_counter() - start) * 1000)
            for _ in range(CALLS // ROUNDS):
                start = time.perf_counter()
                await broker.call_tool(spec.name, "echo", {"text": "hi"})
                laters.append((time.perf_counter() - start) * 1000)
        finally:
            await broker.aclose()
    return firsts, laters


def p90(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.9) - 1)]


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        script = root / "bench_server.py"
        script.write_text(SERVER, encoding="utf-8")
        ports = {"http": free_port(), "sse": free_port()}
        servers = [
            subprocess.Popen(
                [sys.executable, str(script), "streamable-http" if kind == "http" else "sse", str(port)],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for kind, port in ports.items()
        ]
        try:
            for port in ports.values():
                wait_for(port)
            specs = [
                MCPServerSpec("stdio", (sys.executable, str(script))),
                MCPServerSpec("http", transport="http", url=f"http://127.0.0.1:{ports['http']}/mcp"),
                MCPServerSpec("sse", transport="sse", url=f"http://127.0.0.1:{ports['sse']}/sse"),
            ]
            print(f"{'transport':<10}{'first call ms (median / p90)':>32}{'later call ms (median / p90)':>32}")
            for spec in specs:
                firsts, laters = asyncio.run(measure(spec, root))
                first = f"{statistics.median(firsts):.1f} / {p90(firsts):.1f}"
                later = f"{statistics.median(laters):.1f} / {p90(laters):.1f}"
                print(f"{spec.name:<10}{first:>32}{later:>32}")
                old = statistics.median(firsts) * CALLS
                new = statistics.median(firsts) + statistics.median(laters) * (CALLS - 1)
                print(f"{'':<10}{CALLS} calls in one run: {new:.0f} ms kept session vs {old:.0f} ms process per call")
        finally:
            for server in servers:
                server.terminate()
                server.wait(timeout=10)


if __name__ == "__main__":
    main()
