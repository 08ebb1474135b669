"""Preview servers: started through the ``preview`` tool by the (scripted) model, reachable on
loopback while the run goes on, kept out of the command-process registry, and gone with the run."""

from __future__ import annotations

import asyncio
import os
import socket
import urllib.request
from pathlib import Path
from typing import Any

from rich.console import Console
from tests.app.support import call, say

from protoagent.events import MemoryStore
from protoagent.interfaces.cli.render import TerminalRenderer
from protoagent.testing import ScriptedModel
from protoagent.tools.approvals import ApprovalAnswer, ApprovalRequest
from protoagent.workflow.run import RunOptions, run_task

SERVE = "python3 -m http.server $PORT --bind 127.0.0.1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def fetch(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return str(response.read().decode())


def group_members(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (zombies not counted)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def test_a_preview_server_answers_on_loopback_during_the_run_and_no_process_is_left_after(tmp_path: Path) -> None:
    port = free_port()
    served: list[str] = []
    asked: list[str] = []

    async def answer(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request.tool)
        if request.tool == "shell":  # the preview started before: the person looks at it now
            served.append(await asyncio.to_thread(fetch, f"http://127.0.0.1:{port}/"))
        return ApprovalAnswer.once("looks fine")

    turns = [
        call("create_file", "assistant", path="index.html", content="<h1>preview works</h1>\n"),
        call("preview", "assistant", action="start", command=SERVE, port=port),
        call("preview", "assistant", action="status"),
        call("shell", "assistant", command="true"),
        say("The page is served.", "assistant"),
    ]
    home = tmp_path / "home"
    (tmp_path / "cwd").mkdir()
    store = MemoryStore()
    options = RunOptions(
        repo=tmp_path / "cwd",
        model="scripted:inline",
        store=store,
        approval="ask",
        answerer=answer,
        provider=ScriptedModel.from_lines(turns),
        artifacts_root=home / "artifacts",
        data_home=home,
        mode="work",
    )
    report = asyncio.run(run_task("serve the page", options))
    assert report.status == "completed", report
    assert served and "preview works" in served[0]
    events = store.load(report.session_id)
    ended = [e.payload for e in events if e.type == "tool.ended" and e.payload.get("tool") == "preview"]
    started: dict[str, Any] = ended[0]["data"]
    assert started["url"] == f"http://127.0.0.1:{port}/" and started["listening"] is True
    assert ended[1]["data"]["running"] is True
    console = Console(record=True, width=200)
    renderer = TerminalRenderer(console)
    for event in events:
        renderer(event)
    assert f"preview http://127.0.0.1:{port}/" in console.export_text()  # what the terminal and chat print
    assert "preview" in asked  # started like every command: approved
    assert not alive(int(started["pid"])), "the preview's process outlived the run"
    assert group_members(int(started["pid"])) == [], "a process of the preview's group outlived the run"
    refused: list[str] = []
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2)
    except OSError as exc:
        refused.append(str(exc))
    assert refused, "the port still answers after the run"


def test_previews_stay_out_of_the_command_process_registry(tmp_path: Path) -> None:
    from protoagent.processes.command import NO_SANDBOX, CommandRequest, CommandSite, prepare_command
    from protoagent.processes.preview import PreviewRegistry
    from protoagent.processes.runner import ProcessRegistry

    commands, previews = ProcessRegistry(), PreviewRegistry()
    site = CommandSite(tmp_path.resolve(), tmp_path / "home", "python3", NO_SANDBOX)
    command = prepare_command(CommandRequest(["/bin/sh", "-c", "sleep 30"], ".", {"PATH": "/usr/bin:/bin"}), site)
    preview = previews.start(command, free_port(), tmp_path / "artifacts", "sleep 30")
    try:
        assert commands.listed() == [] and commands.get(preview.id) is None
        assert [p.id for p in previews.listed()] == [preview.id]
    finally:
        previews.shutdown()
    assert not alive(preview.process.pid)


def test_auto_approval_never_starts_a_preview_alone_because_it_has_network(tmp_path: Path) -> None:
    port = free_port()
    turns = [
        call("preview", "assistant", action="start", command=SERVE, port=port),
        say("Could not start it.", "assistant"),
    ]
    home = tmp_path / "home"
    (tmp_path / "cwd").mkdir()
    store = MemoryStore()
    options = RunOptions(
        repo=tmp_path / "cwd",
        model="scripted:inline",
        store=store,
        approval="auto",
        provider=ScriptedModel.from_lines(turns),
        artifacts_root=home / "artifacts",
        data_home=home,
        mode="work",
    )
    report = asyncio.run(run_task("serve the page", options))
    ended = [e.payload for e in store.load(report.session_id) if e.type == "tool.ended"]
    assert [(p["tool"], p["status"]) for p in ended] == [("preview", "denied")]
    from protoagent.processes.preview import port_free

    assert port_free(port)
