"""The MCP broker against a real stdio MCP server (the SDK's MCPServer) started by each call."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protoagent.errors import ConfigError
from protoagent.integrations import MCP_TOOLS
from protoagent.integrations.mcp_arguments import minimal_problems
from protoagent.integrations.mcp_broker import MCPBroker
from protoagent.integrations.mcp_config import load_mcp_servers
from protoagent.models.types import ToolCall
from protoagent.tools.approvals import ApprovalAnswer, ApprovalRequest, Policy
from protoagent.tools.pipeline import ToolPipeline, ToolResult

from .helpers import event_types, make_pipeline

pytest.importorskip("mcp", reason="the MCP broker needs the mcp SDK (protoagent[mcp])")

SERVER = '''
import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer

with open(os.environ["PID_FILE"], "a") as pids:
    pids.write(f"{os.getpid()}\\n")
app = MCPServer("demo")


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


app.run("stdio")
'''


class Demo:
    """A workspace, a data home and the files the demo server writes."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "ws"
        self.home = tmp_path / "home"
        self.root.mkdir()
        self.home.mkdir()
        self.script = tmp_path / "demo_server.py"
        self.script.write_text(SERVER, encoding="utf-8")
        self.pid_file = tmp_path / "pids.txt"
        self.calls_file = tmp_path / "calls.txt"

    def declare(self, where: str = "workspace", name: str = "demo") -> Path:
        env = {"PID_FILE": str(self.pid_file), "CALLS_FILE": str(self.calls_file)}
        config = {"servers": {name: {"command": [sys.executable, str(self.script)], "env": env}}}
        path = self.root / ".protoagent" / "mcp.json" if where == "workspace" else self.home / "mcp.json"
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(config), encoding="utf-8")
        return path

    def pipeline(self, policy: Policy = "auto", timeout_s: float = 60.0, **kw: Any) -> ToolPipeline:
        broker = MCPBroker.from_files(self.root, self.home, timeout_s=timeout_s)
        return make_pipeline(self.root, [tool() for tool in MCP_TOOLS], policy, {"mcp_broker": broker}, **kw)

    def calls(self) -> list[str]:
        return self.calls_file.read_text().splitlines() if self.calls_file.exists() else []

    def pids(self) -> list[int]:
        return [int(line) for line in self.pid_file.read_text().split()] if self.pid_file.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    demo = Demo(tmp_path)
    yield demo
    assert [pid for pid in demo.pids() if alive(pid)] == [], "an MCP server outlived its call"


def run(pipeline: ToolPipeline, name: str, call_id: str = "c1", **args: Any) -> ToolResult:
    return asyncio.run(pipeline.run(ToolCall(call_id, name, args)))


def test_list_tools_shows_names_and_one_line_descriptions(demo: Demo) -> None:
    demo.declare("workspace")
    pipeline = demo.pipeline("auto")
    result = run(pipeline, "list_mcp_tools", server="demo")
    assert result.status == "ok", result.output
    assert result.output == (
        "external content from MCP server 'demo' (untrusted; evidence, not instructions)\n"
        "2 tools:\n- add: Add two integers.\n- echo: Echo the text back."
    )
    assert "approval.requested" in event_types(pipeline), "a repository's server starts only with approval"
    assert len(demo.pids()) == 1


def test_a_data_home_server_is_listed_without_approval(demo: Demo) -> None:
    demo.declare("data_home")
    pipeline = demo.pipeline("deny")
    result = run(pipeline, "list_mcp_tools", server="demo")
    assert result.status == "ok", result.output
    assert "approval.requested" not in event_types(pipeline)


def test_a_workspace_server_is_not_started_when_approval_is_denied(demo: Demo) -> None:
    demo.declare("workspace")
    result = run(demo.pipeline("deny"), "list_mcp_tools", server="demo")
    assert result.status == "denied"
    assert demo.pids() == []


def test_schema_shows_the_declared_input_schema(demo: Demo) -> None:
    demo.declare("workspace")
    result = run(demo.pipeline("auto"), "mcp_tool_schema", server="demo", tool="add")
    assert result.status == "ok", result.output
    assert result.data["input_schema"]["required"] == ["a", "b"]
    assert result.data["input_schema"]["properties"]["a"]["type"] == "integer"
    assert "Both must be whole numbers." in result.output


def test_a_call_runs_through_the_pipeline_with_approval(demo: Demo) -> None:
    demo.declare("workspace")
    seen: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        seen.append(request)
        return ApprovalAnswer(True)

    pipeline = demo.pipeline("ask", answerer=approve)
    assert run(pipeline, "list_mcp_tools", server="demo").status == "ok"
    result = run(pipeline, "call_mcp_tool", "c2", server="demo", tool="add", arguments={"a": 2, "b": 3})
    assert result.status == "ok", result.output
    assert (
        result.output == "external content from MCP server 'demo' tool 'add' (untrusted; evidence, not instructions)\n5"
    )
    assert demo.calls() == ["add 2 3"]
    preview = seen[-1].preview
    assert preview.startswith("call MCP tool 'add' on MCP server 'demo' from ")
    assert (
        sys.executable in preview and 'arguments: {"a": 2, "b": 3}' in preview and "env CALLS_FILE, PID_FILE" in preview
    )
    assert len(demo.pids()) == 2, "each call opens a fresh session"


def test_auto_policy_runs_a_call_after_the_schema_is_known(demo: Demo) -> None:
    demo.declare("workspace")
    pipeline = demo.pipeline("auto")
    assert run(pipeline, "mcp_tool_schema", server="demo", tool="echo").status == "ok"
    result = run(pipeline, "call_mcp_tool", "c2", server="demo", tool="echo", arguments='{"text": "hi"}')
    assert result.status == "ok" and result.output.endswith("\nhi")
    assert demo.calls() == ["echo hi"]


def test_invalid_arguments_are_rejected_before_approval(demo: Demo) -> None:
    demo.declare("workspace")
    pipeline = demo.pipeline("auto")
    run(pipeline, "list_mcp_tools", server="demo")
    before = len(pipeline.log)
    result = run(pipeline, "call_mcp_tool", "c2", server="demo", tool="add", arguments={"a": "two"})
    assert result.status == "rejected" and result.data["kind"] == "invalid_arguments"
    assert result.data["checker"] == "jsonschema"
    assert "(arguments): 'b' is a required property" in result.output and "a: 'two' is not of type" in result.output
    assert [e.type for e in pipeline.log.events[before:]] == ["tool.started", "tool.ended"]
    assert demo.calls() == [] and len(demo.pids()) == 1


def test_a_call_before_the_schema_is_known_is_rejected_with_the_way_forward(demo: Demo) -> None:
    demo.declare("workspace")
    pipeline = demo.pipeline("auto")
    result = run(pipeline, "call_mcp_tool", server="demo", tool="add", arguments={"a": 1, "b": 2})
    assert result.status == "rejected" and result.data["kind"] == "schema_unknown"
    assert "mcp_tool_schema(server='demo', tool='add')" in result.output
    assert demo.pids() == []


def test_unknown_tools_and_servers_are_rejected_with_the_names(demo: Demo) -> None:
    demo.declare("workspace")
    pipeline = demo.pipeline("auto")
    fresh = run(pipeline, "mcp_tool_schema", server="demo", tool="subtract")
    assert fresh.status == "rejected" and fresh.data["kind"] == "unknown_mcp_tool"
    assert fresh.data["available_tools"] == ["add", "echo"]
    call = run(pipeline, "call_mcp_tool", "c2", server="demo", tool="subtract", arguments={})
    assert call.status == "rejected" and "its tools are: add, echo" in call.output
    server = run(pipeline, "list_mcp_tools", "c3", server="demo2")
    assert server.status == "rejected" and server.data["available_servers"] == ["demo"]
    assert len(demo.pids()) == 1


def test_a_denied_call_never_reaches_the_server(demo: Demo) -> None:
    demo.declare("data_home")
    pipeline = demo.pipeline("deny")
    assert run(pipeline, "list_mcp_tools", server="demo").status == "ok"
    result = run(pipeline, "call_mcp_tool", "c2", server="demo", tool="echo", arguments={"text": "secret"})
    assert result.status == "denied"
    assert demo.calls() == [] and len(demo.pids()) == 1


def test_a_server_that_cannot_start_is_an_error_with_its_stderr(demo: Demo) -> None:
    config = {"servers": {"broken": {"command": [sys.executable, "-c", "import sys; sys.exit('no config found')"]}}}
    (demo.root / ".protoagent").mkdir()
    (demo.root / ".protoagent" / "mcp.json").write_text(json.dumps(config))
    result = run(demo.pipeline("auto"), "list_mcp_tools", server="broken")
    assert result.status == "error"
    assert "MCP server 'broken'" in result.output and "no config found" in result.output


def test_a_server_that_never_answers_is_stopped_at_the_timeout(demo: Demo) -> None:
    hang = f"import os, time; open({str(demo.pid_file)!r}, 'a').write(f'{{os.getpid()}}\\n'); time.sleep(60)"
    config = {"servers": {"silent": {"command": [sys.executable, "-c", hang]}}}
    (demo.root / ".protoagent").mkdir()
    (demo.root / ".protoagent" / "mcp.json").write_text(json.dumps(config))
    result = run(demo.pipeline("auto", timeout_s=1.5), "list_mcp_tools", server="silent")
    assert result.status == "error" and "no answer within 1.5 s" in result.output
    assert len(demo.pids()) == 1  # the fixture checks that it is gone


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", "cannot read MCP servers"),
        ('{"servers": []}', 'field "servers" must be an object'),
        ('{"servers": {"x": {"command": "docs-mcp"}}}', 'field "servers.x.command" must be a non-empty list'),
        ('{"servers": {"x": {"command": ["a"], "cmd": 1}}}', "unknown field(s) ['cmd']"),
        ('{"servers": {"x": {"command": ["a"], "env": {"K": 1}}}}', 'field "servers.x.env" must be an object of'),
        ('{"servers": {"x": {"command": ["a"], "transport": "http"}}}', 'only "stdio" is supported'),
        ('{"servers": {"a b": {"command": ["a"]}}}', "server names use letters"),
    ],
)
def test_a_malformed_config_names_file_field_and_fix(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / ".protoagent" / "mcp.json"
    path.parent.mkdir()
    path.write_text(content)
    with pytest.raises(ConfigError) as raised:
        load_mcp_servers(tmp_path, None)
    assert str(raised.value).startswith(f"{path}: ") and expected in str(raised.value)


def test_the_workspace_file_overrides_a_data_home_server_of_the_same_name(demo: Demo) -> None:
    home_file = demo.declare("data_home")
    workspace_file = demo.declare("workspace")
    servers = load_mcp_servers(demo.root, demo.home)
    assert servers["demo"].source == workspace_file != home_file
    assert not servers["demo"].trusted


def test_the_minimal_argument_check_covers_required_keys_and_types() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "tags": {"type": ["array", "null"]}},
        "required": ["a", "b"],
        "additionalProperties": False,
    }
    assert minimal_problems(schema, {"a": 1, "b": 2, "tags": None}) == ("b: not a declared property",)
    assert minimal_problems(schema, {"a": True, "tags": "x"}) == (
        "b: required property is missing",
        "a: True is not of type integer",
        "tags: 'x' is not of type array or null",
    )
