"""A workspace, a data home, a demo MCP server script, and a pipeline around the MCP tools."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from protoagent.integrations import MCP_TOOLS
from protoagent.integrations.mcp_broker import MCPBroker
from protoagent.models.types import ToolCall
from protoagent.processes.sandbox import select_sandbox
from protoagent.tools.approvals import Answerer, ApprovalAnswer, ApprovalRequest, Policy
from protoagent.tools.pipeline import ToolPipeline, ToolResult
from protoagent.tools.services import RunServices

from .helpers import make_pipeline

T = TypeVar("T")

SERVER = '''
import os
import sys

from mcp.server.mcpserver import MCPServer

with open(os.environ["PID_FILE"], "a") as pids:
    pids.write(f"{os.getpid()}\\n")
if os.environ.get("NOISE"):
    print(os.environ["NOISE"], flush=True)
app = MCPServer("demo")
count = 0


def _record(call: str) -> None:
    with open(os.environ["CALLS_FILE"], "a") as calls:
        calls.write(call + "\\n")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers.

    Both must be whole numbers."""
    _record(f"add {a} {b}")
    return a + b


@app.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    _record(f"echo {text}")
    return text


@app.tool()
def increment() -> int:
    """Count calls in this server process."""
    global count
    count += 1
    _record(f"increment {count}")
    return count


@app.tool()
def wait(seconds: float) -> str:
    """Sleep, then answer."""
    import time

    _record("wait")
    time.sleep(seconds)
    return "waited"


@app.prompt()
def fix_bug(path: str) -> str:
    """Fix the bug in one file."""
    return f"Fix the failing parse in {path} and keep the tests green."


@app.resource("notes://todo")
def todo() -> str:
    """What is left to do."""
    return "write the changelog"


app.run("stdio")
'''


class Demo:
    """A workspace, a data home and the files the demo server writes."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp = tmp_path
        self.root = tmp_path / "ws"
        self.home = tmp_path / "home"
        self.root.mkdir(parents=True)
        self.home.mkdir()
        self.script = tmp_path / "demo_server.py"
        self.script.write_text(SERVER, encoding="utf-8")
        self.pid_file = tmp_path / "pids.txt"
        self.calls_file = tmp_path / "calls.txt"

    def entry(self, **extra: Any) -> dict[str, Any]:
        env = {"PID_FILE": str(self.pid_file), "CALLS_FILE": str(self.calls_file)}
        return {"command": [sys.executable, str(self.script)], "env": env, **extra}

    def declare(self, where: str = "workspace", name: str = "demo", **extra: Any) -> Path:
        return self.write(where, {"servers": {name: self.entry(**extra)}})

    def write(self, where: str, config: dict[str, Any]) -> Path:
        paths = {
            "workspace": self.root / ".protoagent" / "mcp.json",
            "project": self.root / ".mcp.json",
            "data_home": self.home / "mcp.json",
        }
        path = paths[where]
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(config), encoding="utf-8")
        return path

    def broker(self, timeout_s: float | None = None) -> MCPBroker:
        """The run's broker; the sandbox lets repository servers write the demo's files beside
        the workspace, as ``--writable`` would."""
        sandbox = select_sandbox("auto", writable=[self.tmp])
        return MCPBroker.from_files(self.root, self.home, timeout_s=timeout_s, sandbox=sandbox)

    def pipeline(
        self, policy: Policy = "auto", broker: MCPBroker | None = None, answerer: Answerer | None = None
    ) -> ToolPipeline:
        services = RunServices(mcp_broker=broker or self.broker())
        return make_pipeline(self.root, [tool() for tool in MCP_TOOLS], policy, services, answerer=answerer)

    def calls(self) -> list[str]:
        return self.calls_file.read_text().splitlines() if self.calls_file.exists() else []

    def running(self, settle_s: float = 5.0) -> list[int]:
        """Host process ids of demo servers still running after up to ``settle_s`` seconds (a
        sandboxed server's own pid is its namespace's, so processes are found by the script in
        their command line; one whose sandbox was just stopped may take a moment to go)."""
        deadline = time.monotonic() + settle_s
        while True:
            found = []
            for entry in Path("/proc").iterdir():
                try:
                    if entry.name.isdigit() and str(self.script).encode() in (entry / "cmdline").read_bytes():
                        found.append(int(entry.name))
                except OSError:
                    continue
            if not found or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def pids(self) -> list[int]:
        return [int(line) for line in self.pid_file.read_text().split()] if self.pid_file.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def session(pipeline: ToolPipeline, body: Callable[[ToolPipeline], Awaitable[T]]) -> T:
    """Run ``body`` in one event loop, as a run does, then stop the broker's servers."""

    async def main() -> T:
        try:
            return await body(pipeline)
        finally:
            broker = pipeline.env.services.mcp_broker
            assert broker is not None
            await broker.aclose()

    return asyncio.run(main())


async def call(pipeline: ToolPipeline, name: str, id_: str = "c1", /, **args: Any) -> ToolResult:
    return await pipeline.run(ToolCall(id_, name, args))


def one(pipeline: ToolPipeline, name: str, /, **args: Any) -> ToolResult:
    """One call in a session of its own."""

    async def body(p: ToolPipeline) -> ToolResult:
        return await call(p, name, "c1", **args)

    return session(pipeline, body)


def approver(seen: list[ApprovalRequest], allow: bool = True) -> Answerer:
    async def answer(request: ApprovalRequest) -> ApprovalAnswer:
        seen.append(request)
        return ApprovalAnswer(True) if allow else ApprovalAnswer.deny("no")

    return answer
