"""The lead's MCP offer is one coherent set: native tools for servers whose tools are listed,
the general list/schema/call tools only while some server has no native tools, resources
always; a tool's description never says "needs approval" when the configuration trusts it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workflow.support import run_workflow, say

from .mcp_support import Demo

pytest.importorskip("mcp", reason="the MCP broker needs the mcp SDK (protoagent[mcp])")
GENERAL = {"list_mcp_tools", "mcp_tool_schema", "call_mcp_tool"}


def _user_servers(tmp_path: Path, servers: dict[str, object]) -> None:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def _offer(tmp_path: Path, files: dict[str, str] | None = None) -> dict[str, str]:
    run = run_workflow(
        tmp_path,
        "add numbers",
        [say("nothing to do", "architect")],
        mcp=True,
        approval="auto",
        surface="editing",
        files=files or {"dates.py": "x = 1\n"},
    )
    return {t.name: t.description for t in run.model.requests[0].tools}


def test_listed_servers_are_offered_natively_without_the_general_call_tools(tmp_path: Path) -> None:
    demo = Demo(tmp_path / "demo")
    _user_servers(tmp_path, {"demo": {**demo.entry(), "trusted": True}})
    offered = _offer(tmp_path)
    native = {name for name in offered if name.startswith("mcp__demo__")}
    assert native == {"mcp__demo__add", "mcp__demo__echo", "mcp__demo__increment", "mcp__demo__wait"}
    assert not GENERAL & set(offered), "one way to call a server's tools, not two"
    assert "mcp_resources" in offered, "resources stay reachable"


def test_the_general_tools_are_offered_while_a_server_has_no_native_tools(tmp_path: Path) -> None:
    demo = Demo(tmp_path / "demo")
    _user_servers(tmp_path, {"demo": {**demo.entry(), "trusted": True}})
    repository = json.dumps({"mcpServers": {"repo-docs": {"command": "docs"}}})
    offered = _offer(tmp_path, {"dates.py": "x = 1\n", ".mcp.json": repository})
    assert GENERAL <= set(offered), "the untrusted repository server is reached through them"
    assert "mcp__demo__add" in offered


def test_a_trusted_tools_description_does_not_say_it_needs_approval(tmp_path: Path) -> None:
    demo = Demo(tmp_path / "demo")
    _user_servers(tmp_path, {"demo": {**demo.entry(), "trusted_tools": ["add"]}})
    offered = _offer(tmp_path)
    assert "needs approval" not in offered["mcp__demo__add"]
    assert "trusted in your configuration" in offered["mcp__demo__add"]
    assert "needs approval" in offered["mcp__demo__echo"]
