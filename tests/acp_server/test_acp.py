"""``protoagent acp`` as an editor drives it: the package's client over stdio, the scripted model."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from acp import text_block
from acp.schema import FileEditToolCallContent

from protoagent.api import open_store
from protoagent.testing import final_turn, tool_turn, write_script

from .support import BUGGY, FIXED, RecordingClient, acp_agent, date_repo, edit_script

EXE = [sys.executable, "-m", "protoagent"]


def _prompt(conn: object, session_id: str, text: str) -> object:
    return conn.prompt(session_id=session_id, prompt=[text_block(text)])  # type: ignore[attr-defined]


def test_prompt_edit_allowed_in_the_editor_applies_it_and_streams_tool_calls(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    client = RecordingClient(choice="allow-once")

    async def scenario() -> str:
        async with acp_agent(tmp_path / "home", edit_script(tmp_path / "s.jsonl"), client) as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            response = await asyncio.wait_for(_prompt(conn, session.session_id, "fix the date bug"), 120)
            return str(response.stop_reason)

    assert asyncio.run(scenario()) == "end_turn"
    assert (repo / "dates.py").read_text() == FIXED
    asked = [(call, options) for call, options in client.permissions if call.kind == "edit"]
    assert len(asked) == 1
    tool_call, options = asked[0]
    assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once"}
    diff = tool_call.content[0] if tool_call.content else None
    assert isinstance(diff, FileEditToolCallContent) and diff.path == str(repo / "dates.py")
    assert "int(month), int(day)" in diff.new_text and "int(day), int(month)" in (diff.old_text or "")
    started = [u for u in client.of("tool_call") if u.title.startswith("edit_file")]
    assert started and started[0].kind == "edit"
    assert tool_call.tool_call_id == started[0].tool_call_id
    assert started[0].locations[0].path == str(repo / "dates.py")
    ended = [u for u in client.of("tool_call_update") if u.tool_call_id == started[0].tool_call_id and u.status]
    assert ended[-1].status == "completed"
    kept = [c for c in ended[-1].content if isinstance(c, FileEditToolCallContent)]
    assert kept and "int(month), int(day)" in kept[0].new_text, "the completed edit keeps its diff"
    assert any("Fixed parse_date" in u.content.text for u in client.of("agent_message_chunk"))
    assert client.of("plan") and all(e.status == "completed" for e in client.of("plan")[-1].entries)


def test_prompt_edit_rejected_in_the_editor_leaves_the_file_unchanged(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    client = RecordingClient(choice="reject")

    async def scenario() -> str:
        async with acp_agent(tmp_path / "home", edit_script(tmp_path / "s.jsonl"), client) as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            response = await asyncio.wait_for(_prompt(conn, session.session_id, "fix the date bug"), 120)
            return str(response.stop_reason)

    assert asyncio.run(scenario()) == "end_turn"
    assert (repo / "dates.py").read_text() == BUGGY
    assert [call.kind for call, _ in client.permissions].count("edit") == 1
    edit_ids = {u.tool_call_id for u in client.of("tool_call") if u.kind == "edit"}
    failed = [u for u in client.of("tool_call_update") if u.tool_call_id in edit_ids and u.status == "failed"]
    assert failed and "rejected in the editor" in failed[0].content[0].content.text


def test_session_cancel_stops_the_run_and_its_processes(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    marker = repo / "started.txt"  # inside the workspace: the sandbox lets the command write there
    token = f"slow-{tmp_path.name}"
    slow = f"import time; open('started.txt', 'w').write({token!r}); time.sleep(60)"
    script = write_script(
        tmp_path / "s.jsonl", [tool_turn("execute_command", role="architect", argv=["python", "-c", slow])]
    )
    client = RecordingClient(choice="allow-once")

    async def scenario() -> str:
        async with acp_agent(tmp_path / "home", script, client) as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            running = asyncio.create_task(_prompt(conn, session.session_id, "add a slow step"))
            assert await asyncio.to_thread(_appears, marker), "the command never started"
            assert await asyncio.to_thread(alive_with, token), "the command is not running"
            await conn.cancel(session_id=session.session_id)
            response = await asyncio.wait_for(running, 30)
            return str(response.stop_reason)

    started = time.monotonic()
    assert asyncio.run(scenario()) == "cancelled"
    assert time.monotonic() - started < 50
    assert alive_with(token) == []


def test_session_load_replays_a_recorded_session(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    home = tmp_path / "home"
    script = edit_script(tmp_path / "s.jsonl")
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    run = subprocess.run(
        [*EXE, "run", "--model", f"scripted:{script}", "--repo", str(repo), "--approval", "auto", "--json", "fix"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    recorded = json.loads(run.stdout)["session_id"]
    client = RecordingClient()

    async def scenario() -> None:
        async with acp_agent(home, script, client) as (conn, _):
            await asyncio.wait_for(conn.load_session(cwd=str(repo), session_id=recorded), 60)

    asyncio.run(scenario())
    assert client.updates and {sid for sid, _ in client.updates} == {recorded}
    assert client.of("user_message_chunk")[0].content.text == "fix"
    assert any("Fixed parse_date" in u.content.text for u in client.of("agent_message_chunk"))
    edits = [u for u in client.of("tool_call") if u.kind == "edit"]
    assert edits and edits[0].locations[0].path == str(repo / "dates.py")
    diffs = [c for u in client.of("tool_call_update") for c in u.content or () if c.type == "diff"]
    assert diffs and "int(month), int(day)" in diffs[0].new_text
    assert client.permissions == []


def _appears(path: Path) -> bool:
    deadline = time.monotonic() + 60
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    return path.exists()


def alive_with(token: str) -> list[int]:
    """Live (non-zombie) processes whose command line holds ``token``, seen from the host
    (a sandboxed command has its own pid namespace, so its own pid would not do)."""
    time.sleep(0.2)
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and token in (proc / "cmdline").read_text(errors="replace"):
                if (proc / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_an_unknown_model_is_a_one_line_error_for_the_prompt(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    client = RecordingClient()
    missing = tmp_path / "missing.jsonl"

    async def scenario() -> str:
        async with acp_agent(tmp_path / "home", missing, client) as (conn, process):
            session = await conn.new_session(cwd=str(repo))
            try:
                await asyncio.wait_for(_prompt(conn, session.session_id, "fix the date bug"), 60)
            except Exception as exc:  # the client raises the agent's JSON-RPC error
                assert process.returncode is None, "the server must survive a bad prompt"
                return str(getattr(exc, "data", exc))
            return "no error"

    message = asyncio.run(scenario())
    assert "cannot read model script" in message and "Traceback" not in message


def test_session_load_of_a_session_this_server_ran_replays_its_run_and_of_an_unknown_one_is_a_clear_error(
    tmp_path: Path,
) -> None:
    repo = date_repo(tmp_path)
    script = write_script(tmp_path / "s.jsonl", [final_turn("Hello from ProtoAgent.", role="architect")])
    live = RecordingClient()

    async def scenario() -> None:
        async with acp_agent(tmp_path / "home", script, live) as (conn, _):
            try:
                await asyncio.wait_for(conn.load_session(cwd=str(repo), session_id="nope"), 60)
            except Exception as exc:  # the client raises the agent's JSON-RPC error
                refused = str(getattr(exc, "data", exc))
            else:
                refused = "no error"
            assert "nope" in refused
            session = await conn.new_session(cwd=str(repo))
            await asyncio.wait_for(_prompt(conn, session.session_id, "hello"), 60)
            before = len(live.updates)
            await asyncio.wait_for(conn.load_session(cwd=str(repo), session_id=session.session_id), 60)
            replayed = live.updates[before:]
            assert [u.content.text for _, u in replayed if u.session_update == "user_message_chunk"] == ["hello"]
            assert any(
                "Hello from ProtoAgent." in u.content.text
                for _, u in replayed
                if u.session_update == "agent_message_chunk"
            )

    asyncio.run(scenario())


def test_the_id_session_new_returned_is_listed_loads_and_continues_one_recorded_session_after_an_agent_restart(
    tmp_path: Path,
) -> None:
    repo = date_repo(tmp_path)
    home = tmp_path / "home"
    script = write_script(tmp_path / "s.jsonl", [final_turn("Noted.", role="architect")])
    first = RecordingClient()

    async def first_agent() -> str:
        async with acp_agent(home, script, first) as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            for text in ("hello", "hello again"):
                await asyncio.wait_for(_prompt(conn, session.session_id, text), 60)
            return str(session.session_id)

    acp_id = asyncio.run(first_agent())
    assert first.initialized is not None, "initialize advertises session/load and session/list"
    capabilities = first.initialized.agent_capabilities
    assert capabilities is not None and capabilities.load_session
    assert capabilities.session_capabilities is not None and capabilities.session_capabilities.list is not None
    with open_store(home) as store:
        assert [row.session_id for row in store.list()] == [acp_id], "the ACP id is the recorded id"
    replay = RecordingClient()

    async def restarted_agent() -> list[str]:
        async with acp_agent(home, script, replay) as (conn, _):
            listed = await asyncio.wait_for(conn.list_sessions(cwd=str(repo)), 60)
            elsewhere = await asyncio.wait_for(conn.list_sessions(cwd=str(tmp_path)), 60)
            assert elsewhere.sessions == []
            await asyncio.wait_for(conn.load_session(cwd=str(repo), session_id=acp_id), 60)
            await asyncio.wait_for(_prompt(conn, acp_id, "one more"), 60)
            return [f"{s.session_id} {s.cwd} {s.title}" for s in listed.sessions]

    assert asyncio.run(restarted_agent()) == [f"{acp_id} {repo} hello"]
    assert [u.content.text for u in replay.of("user_message_chunk")][:2] == ["hello", "hello again"]
    with open_store(home) as store:
        assert len(store.list()) == 1, "every prompt continued the one recorded session"
        events = store.load(acp_id)
    said = [e.payload["text"] for e in events if e.type == "user.message" and e.agent == "architect"]
    assert said == ["hello", "hello again", "one more"]


def test_an_unreachable_model_ends_the_prompt_with_a_visible_failure_message(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    client = RecordingClient()
    home = tmp_path / "home"
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    unreachable = "openai-compatible:http://127.0.0.1:9/v1#nothing-listens"

    async def scenario() -> str:
        from acp import PROTOCOL_VERSION, spawn_agent_process

        args = ("-m", "protoagent", "acp", "--model", unreachable)
        async with spawn_agent_process(client, sys.executable, *args, env=env) as (conn, _):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
            session = await conn.new_session(cwd=str(repo))
            response = await asyncio.wait_for(_prompt(conn, session.session_id, "fix the date bug"), 120)
            return str(response.stop_reason)

    assert asyncio.run(scenario()) == "end_turn"
    said = "".join(u.content.text for u in client.of("agent_message_chunk"))
    assert "connection failed" in said, said
    assert "── failed" in said and "Notes:" in said


def test_tool_call_ids_stay_unique_across_prompts_of_one_session(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    call = {"id": "call_1", "name": "read_file", "arguments": {"path": "dates.py"}}
    read = {"role": "architect", "tool_calls": [call]}
    script = write_script(tmp_path / "s.jsonl", [read, final_turn("Read it.", role="architect")])
    client = RecordingClient()

    async def scenario() -> None:
        async with acp_agent(tmp_path / "home", script, client, "--approval", "auto") as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            for text in ("what does dates.py do?", "and now?"):
                await asyncio.wait_for(_prompt(conn, session.session_id, text), 60)

    asyncio.run(scenario())
    reads = [u for u in client.of("tool_call") if u.kind == "read"]
    assert len(reads) == 2
    ids = [u.tool_call_id for u in client.of("tool_call")]
    assert len(ids) == len(set(ids)), ids
    assert all(u.locations[0].path == str(repo / "dates.py") for u in reads)
    for started in reads:  # each call's updates reach the call they belong to
        ended = [u for u in client.of("tool_call_update") if u.tool_call_id == started.tool_call_id and u.status]
        assert ended and ended[-1].status == "completed"


def test_session_modes_switch_the_approval_policy_of_the_next_prompt(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    client = RecordingClient(choice="allow-once")

    async def scenario() -> tuple[str, list[str], str]:
        async with acp_agent(tmp_path / "home", edit_script(tmp_path / "s.jsonl"), client) as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            modes = session.modes
            await conn.set_session_mode(session_id=session.session_id, mode_id="deny")
            await asyncio.wait_for(_prompt(conn, session.session_id, "fix the date bug"), 120)
            denied_text = (repo / "dates.py").read_text()
            _reassign(tmp_path / "s.jsonl")
            await conn.set_session_mode(session_id=session.session_id, mode_id="auto-edit")
            await asyncio.wait_for(_prompt(conn, session.session_id, "fix the date bug"), 120)
            try:
                await conn.set_session_mode(session_id=session.session_id, mode_id="yolo")
            except Exception as exc:  # the client raises the agent's JSON-RPC error
                refused = str(getattr(exc, "data", exc))
            else:
                refused = "no error"
            return modes.current_mode_id, [m.id for m in modes.available_modes], denied_text + refused

    current, available, rest = asyncio.run(scenario())
    assert current == "ask" and available == ["ask", "auto-edit", "auto", "deny"]
    assert rest.startswith(BUGGY), "under deny the edit was not applied"
    assert "unknown mode 'yolo'" in rest
    assert (repo / "dates.py").read_text() == FIXED, "under auto-edit the edit was applied"
    assert [call.kind for call, _ in client.permissions].count("edit") == 0, "no mode asked about the edit"


def _reassign(script: Path) -> None:
    """Each run reads the script afresh: a new assignment this time, so it is no repeat."""
    script.write_text(script.read_text().replace("fix dates.py", "fix dates.py, allowed now"))


def test_available_commands_advertise_compaction_and_skills_and_compact_runs(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)
    skill = repo / ".agents" / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: review\ndescription: Review a change.\n---\nLook closely.\n")
    script = write_script(tmp_path / "s.jsonl", [final_turn("Noted.", role="architect")])
    client = RecordingClient()

    async def scenario() -> None:
        async with acp_agent(tmp_path / "home", script, client) as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            await asyncio.wait_for(_prompt(conn, session.session_id, "/compact"), 60)
            await asyncio.wait_for(_prompt(conn, session.session_id, "/mcp:time:now"), 60)
            await asyncio.wait_for(_prompt(conn, session.session_id, "hello"), 60)
            await asyncio.wait_for(_prompt(conn, session.session_id, "/compact keep the greeting"), 60)

    asyncio.run(scenario())
    [advertised] = client.of("available_commands_update")  # the set never changed: it was sent once
    names = {c.name: c.description for c in advertised.available_commands}
    assert "compact" in names and names["skill:review"] == "Review a change."
    assert not [name for name in names if name.startswith("mcp:")], "MCP is off: no MCP prompt commands"
    said = [u.content.text for u in client.of("agent_message_chunk")]
    assert said[0] == "nothing to compact yet: send a message first"
    assert said[1].startswith("MCP is off: turn it on with 'protoagent agents enable coding/mcp'"), said
    assert said[-1].startswith("compacted into a"), said


def test_switching_to_deny_during_a_prompt_denies_its_later_effects_without_asking(tmp_path: Path) -> None:
    repo = date_repo(tmp_path)

    class SwitchingClient(RecordingClient):
        """Switches the session to deny while answering its first question."""

        conn: object = None

        def on_connect(self, conn: object) -> None:
            self.conn = conn

        async def request_permission(self, session_id: str, tool_call: object, options: object, **_: object) -> object:
            if not self.permissions:
                await self.conn.set_session_mode(session_id=session_id, mode_id="deny")  # type: ignore[attr-defined]
            return await super().request_permission(session_id, tool_call, options)  # type: ignore[arg-type]

    client = SwitchingClient(choice="allow-once")

    async def scenario() -> None:
        async with acp_agent(tmp_path / "home", edit_script(tmp_path / "s.jsonl"), client) as (conn, _):
            session = await conn.new_session(cwd=str(repo))
            await asyncio.wait_for(_prompt(conn, session.session_id, "fix the date bug"), 120)

    asyncio.run(scenario())
    assert len(client.permissions) == 1, "nothing was asked after the switch"
    assert (repo / "dates.py").read_text() == BUGGY
    failed = [u for u in client.of("tool_call_update") if u.status == "failed" and u.content]
    assert any("switched this session to 'deny'" in u.content[-1].content.text for u in failed)
