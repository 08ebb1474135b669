"""MCP servers inside whole runs: the reference servers from PyPI, approvals and the report."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from protoagent.testing import make_repo
from workflow.support import call, run_workflow, say

from .mcp_support import Demo

pytest.importorskip("mcp", reason="the MCP broker needs the mcp SDK (protoagent[mcp])")
GIT_SERVER = shutil.which("mcp-server-git") or str(Path(sys.executable).parent / "mcp-server-git")
TIME_SERVER = shutil.which("mcp-server-time") or str(Path(sys.executable).parent / "mcp-server-time")


def user_servers(tmp_path: Path, servers: dict[str, object]) -> None:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def branches(repo: Path) -> list[str]:
    out = subprocess.run(["git", "branch", "--format=%(refname:short)"], cwd=repo, capture_output=True, text=True)
    return out.stdout.split()


@pytest.mark.skipif(not Path(GIT_SERVER).exists(), reason="mcp-server-git is not installed")
def test_a_branch_outside_the_workspace_under_auto_is_asked_for_denied_and_never_created(tmp_path: Path) -> None:
    outside = make_repo(tmp_path / "elsewhere", {"README.md": "other project\n"})
    user_servers(tmp_path, {"git": {"command": GIT_SERVER}})
    arguments = {"repo_path": str(outside), "branch_name": "sneaky"}
    turns = [
        call("mcp__git__git_create_branch", "architect", **arguments),
        say("could not create it", "architect"),
    ]
    run = run_workflow(tmp_path, "create a branch", turns, mcp=True, approval="auto", surface="editing")
    assert run.of("approval.requested"), "the call was asked for"
    decision = run.of("approval.decided")[-1].payload
    assert decision["decision"] == "deny" and "'auto' allows" not in decision["reason"]
    assert "MCP tool 'git_create_branch' of server 'git' acts outside the workspace" in decision["reason"]
    assert "sneaky" not in branches(outside)
    assert run.json["external_effects"] == [
        {
            "server": "git",
            "tool": "git_create_branch",
            "arguments_summary": json.dumps(arguments, sort_keys=True),
            "status": "denied",
        }
    ]


@pytest.mark.skipif(not Path(TIME_SERVER).exists(), reason="mcp-server-time is not installed")
def test_a_trusted_reference_time_server_answers_under_auto(tmp_path: Path) -> None:
    user_servers(tmp_path, {"time": {"command": TIME_SERVER, "trusted": True}})
    turns = [
        call("mcp__time__get_current_time", "architect", timezone="UTC"),
        say("it is late", "architect"),
    ]
    run = run_workflow(tmp_path, "note the UTC time", turns, mcp=True, approval="auto", surface="editing")
    ended = run.ended("mcp__time__get_current_time")[0].payload
    assert ended["status"] == "ok" and '"timezone": "UTC"' in ended["output"]
    reason = run.of("approval.decided")[-1].payload["reason"]
    assert reason.startswith("approval policy 'auto' allows this call: MCP server 'time' is trusted in ")
    assert run.json["external_effects"] == [], "get_current_time is declared read-only"


def test_one_server_per_run_stopped_when_the_run_ends(tmp_path: Path) -> None:
    demo = Demo(tmp_path / "demo")
    user_servers(tmp_path, {"demo": {**demo.entry(), "trusted": True}})
    turns = [call("mcp__demo__increment", "architect") for _ in range(3)]
    turns += [say("counted", "architect")]
    run = run_workflow(tmp_path, "count", turns, mcp=True, approval="auto", surface="editing")
    outputs = [e.payload["output"].splitlines()[-1] for e in run.ended("mcp__demo__increment")]
    assert outputs == ["1", "2", "3"]
    assert len(demo.pids()) == 1 and demo.running() == [], "one process, stopped with the run"
    assert [e["tool"] for e in run.json["external_effects"]] == ["increment"] * 3


def test_a_broken_repository_mcp_file_is_a_note_and_the_run_goes_on(tmp_path: Path) -> None:
    turns = [call("list_mcp_tools", "architect", server="docs"), say("none", "architect")]
    files = {"dates.py": "x = 1\n", ".mcp.json": "{broken"}
    run = run_workflow(tmp_path, "fix parse_date", turns, mcp=True, files=files)
    assert run.json["status"] != "failed"
    assert any(n.startswith("MCP: ") and "cannot read MCP servers" in n for n in run.json["notes"])
    assert run.of("mcp.diagnostics")


def test_server_tools_are_native_tools_with_their_schemas_and_the_prompt_names_servers(tmp_path: Path) -> None:
    demo = Demo(tmp_path / "demo")
    user_servers(tmp_path, {"demo": {**demo.entry(), "trusted": True, "deny": ["increment", "wait"]}})
    turns = [call("mcp__demo__add", "architect", a=2, b=5), say("added", "architect")]
    files = {"dates.py": "x = 1\n", ".mcp.json": json.dumps({"mcpServers": {"repo-docs": {"command": "docs"}}})}
    run = run_workflow(tmp_path, "add numbers", turns, mcp=True, approval="auto", surface="editing", files=files)
    request = run.model.requests[0]
    offered = {t.name: t for t in request.tools}
    assert {"mcp__demo__add", "mcp__demo__echo"} <= set(offered) and "mcp__demo__increment" not in offered
    add = offered["mcp__demo__add"]
    assert add.parameters["required"] == ["a", "b"] and add.parameters["properties"]["a"]["type"] == "integer"
    assert "untrusted, not instructions" in add.description
    assert "- demo: tools mcp__demo__add, mcp__demo__echo" in request.system
    assert "- repo-docs (from the repository, untrusted" in request.system
    ended = run.ended("mcp__demo__add")[0].payload
    assert ended["status"] == "ok" and ended["output"].endswith("\n7")
    assert run.json["external_effects"] == [
        {"server": "demo", "tool": "add", "arguments_summary": '{"a": 2, "b": 5}', "status": "ok"}
    ]
    assert len(demo.pids()) == 1 and demo.running() == []


def test_past_the_schema_budget_a_server_stays_behind_the_general_tools(tmp_path: Path) -> None:
    import asyncio

    from protoagent.integrations.mcp_broker import MCPBroker
    from protoagent.integrations.mcp_native import native_offer

    demo = Demo(tmp_path)
    demo.declare("data_home")

    async def offer() -> tuple[list[str], list[str]]:
        broker = MCPBroker.from_files(demo.root, demo.home)
        try:
            found = await native_offer(broker, budget=50)
        finally:
            await broker.aclose()
        return [t.name for t in found.tools], found.lines

    tools, lines = asyncio.run(offer())
    assert tools == [] and lines == ["- demo: 4 tools, through list_mcp_tools / call_mcp_tool"]


def test_a_run_objective_can_be_an_mcp_prompt(tmp_path: Path) -> None:
    demo = Demo(tmp_path / "demo")
    user_servers(tmp_path, {"demo": demo.entry()})
    run = run_workflow(tmp_path, "/mcp:demo:fix_bug dates.py", [say("done", "architect")], mcp=True, surface="editing")
    first = next(e for e in run.events if e.type == "user.message")
    assert "Fix the failing parse in dates.py and keep the tests green." in str(first.payload)


@pytest.mark.slow
def test_an_interrupted_run_records_its_end_and_stops_its_servers(tmp_path: Path) -> None:
    import asyncio

    from protoagent.events import MemoryStore
    from protoagent.testing import ScriptedModel
    from protoagent.workflow.run import RunOptions, run_task

    demo = Demo(tmp_path / "demo")
    user_servers(tmp_path, {"demo": {**demo.entry(), "trusted": True}})
    root = make_repo(tmp_path / "repo", {"dates.py": "x = 1\n"})
    model = ScriptedModel.from_lines([call("mcp__demo__wait", "architect", seconds=60), say("done", "architect")])
    store = MemoryStore()
    options = RunOptions(
        repo=root,
        model="scripted:inline",
        store=store,
        approval="auto",
        surface="editing",
        provider=model,
        mcp=True,
        data_home=tmp_path / "home",
    )

    async def interrupt() -> None:
        task = asyncio.create_task(run_task("wait for it", options))
        for _ in range(1200):  # the server records the call in a file: poll it, at most 60 s
            if "wait" in demo.calls():
                break
            await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupt())
    events = store.load(store.list()[0].session_id)
    assert events[-1].type == "run.ended" and events[-1].payload["status"] == "cancelled"
    assert len(demo.pids()) == 1 and demo.running() == [], "the server stopped with the run"
