"""MCP prompts as the editor's slash commands, on the package's client over stdio: one command per
prompt of each server that may start without asking, a fresh list when that set changes, an
untrusted repository server never started to list them, and a command that runs its prompt."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from acp import text_block
from mcp.types import Prompt, PromptArgument

from integrations.mcp_support import SERVER, Demo
from protoagent.api import open_store
from protoagent.interfaces.acp.commands import available_commands
from protoagent.interfaces.acp.prompt_listing import PromptListing, ServerPrompt, listed_prompt
from protoagent.processes.sandbox import asks_each_command, select_sandbox
from protoagent.settings import set_agent
from protoagent.testing import final_turn, make_repo, write_script

from .support import BUGGY, RecordingClient, acp_agent

QUESTION = 'return f"What does {path} return for a date in March?"'
"""The repository's copy of the demo server asks a question: its run starts no other server."""


def _commands(client: RecordingClient) -> list[dict[str, Any]]:
    """Each ``available_commands_update`` the editor got, as name -> (description, hint)."""
    return [
        {c.name: (c.description, c.input.root.hint if c.input else None) for c in update.available_commands}
        for update in client.of("available_commands_update")
    ]


async def _until(client: RecordingClient, name: str, timeout_s: float = 60) -> list[dict[str, Any]]:
    """The command lists the editor got, once one of them offers ``name``."""
    deadline = time.monotonic() + timeout_s
    while not any(name in listed for listed in _commands(client)):
        if time.monotonic() > deadline:
            raise AssertionError(f"no command list offered {name!r}: {_commands(client)}")
        await asyncio.sleep(0.05)
    return _commands(client)


def test_mcp_prompts_of_startable_servers_are_slash_commands_and_an_approved_server_joins_them(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    set_agent(home, "mcp", True)
    person = Demo(tmp_path / "person")
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"demo": person.entry()}}))
    repo = make_repo(tmp_path / "repo", {"dates.py": BUGGY})
    server = SERVER.replace('return f"Fix the failing parse in {path} and keep the tests green."', QUESTION)
    (repo / "prompt_server.py").write_text(server)  # the repository's own server, inside the sandbox's reach
    files = {"PID_FILE": str(repo / "repo-pids.txt"), "CALLS_FILE": str(repo / "repo-calls.txt")}
    declared = {"repodemo": {"command": sys.executable, "args": ["prompt_server.py"], "env": files}}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": declared}))
    script = write_script(tmp_path / "s.jsonl", [final_turn("Done.", role="architect")])
    client = RecordingClient(choice="allow-once")
    confined = not asks_each_command(select_sandbox("auto"))
    typed = "/mcp:repodemo:fix_bug dates.py"

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
        async with acp_agent(home, script, client) as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            first = await _until(client, "mcp:demo:fix_bug")
            assert not (repo / "repo-pids.txt").exists(), "listing never starts an untrusted repository server"
            prompt = [text_block(typed)]
            done = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=prompt), 120)
            assert done.stop_reason == "end_turn"
            later = await _until(client, "mcp:repodemo:fix_bug") if confined else _commands(client)
            return first, later, str(session.session_id)

    first, later, session_id = asyncio.run(scenario())
    pending, listed = first[0], first[-1]
    assert len(first) >= 2 and not [n for n in pending if n.startswith("mcp:demo:")], "a fresh list followed"
    assert "'demo' (its prompts are being listed)" in pending["mcp:"][0]
    assert listed["mcp:demo:fix_bug"] == ("Fix the bug in one file. (MCP server 'demo')", "path")
    assert not [name for name in listed if name.startswith("mcp:repodemo")]
    about, usage = listed["mcp:"]
    assert "'repodemo' (a repository server: it starts only once you approve it)" in about
    assert "'demo'" not in about and usage == "SERVER:PROMPT [arguments]"
    assert "compact" in listed and "rewind" in listed
    assert [call.title for call, _ in client.permissions] == ["mcp_prompts wants to execute"], (
        "the person's own server started without asking; the repository's only once approved"
    )
    with open_store(home) as store:
        events = store.load(session_id)
    said = [e.payload["text"] for e in events if e.type == "user.message" and e.agent == "architect"]
    assert said == ["What does dates.py return for a date in March?"], "the command ran the server's prompt"
    if confined:  # approved once, it may start without asking: its prompts are listed now
        assert later[-1]["mcp:repodemo:fix_bug"] == ("Fix the bug in one file. (MCP server 'repodemo')", "path")
        assert typed.split()[0] == "/" + "mcp:repodemo:fix_bug", "what was run is what is listed"
        assert "mcp:" not in later[-1], "every server's prompts are listed"
    assert person.running() == [], "the servers started to list prompts and to run one are stopped"


def test_listed_prompts_are_bounded_and_their_arguments_hinted(tmp_path: Path) -> None:
    arguments = [PromptArgument(name="path", required=True), PromptArgument(name="style")]
    long = Prompt(name="review", description="Review one file.\nIgnore the rest.  " + "x" * 500, arguments=arguments)
    shown = listed_prompt("docs", long)
    assert shown is not None and shown.description.startswith("Review one file.") and len(shown.description) <= 200
    assert listed_prompt("docs", Prompt(name="two words")) is None, "no command line can call it"
    assert listed_prompt("docs", Prompt(name="n" * 81)) is None
    listing = PromptListing((shown, ServerPrompt("docs", "plain", "")), ())
    names = {c.name: c for c in available_commands(tmp_path, tmp_path, listing).available_commands}
    assert names["mcp:docs:review"].input is not None
    assert names["mcp:docs:review"].input.root.hint == "path [style=VALUE]"  # type: ignore[union-attr]
    assert names["mcp:docs:plain"].input is None and names["mcp:docs:plain"].description == (
        "MCP prompt 'plain' (MCP server 'docs')"
    )
    assert "mcp:" not in names, "no server is left unlisted"
