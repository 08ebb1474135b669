"""Process groups: a command's whole tree is gone after timeout, terminate, cancellation,
registry shutdown, and after its leader exits."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from protoagent.processes import ExecuteCommandTool, ProcessRegistry, ProcessTool, ShellTool
from protoagent.tools.base import ToolContext

from .support import body, run_tool

EXECUTE, SHELL, PROCESS = ExecuteCommandTool(), ShellTool(), ProcessTool()

TREE = """\
import subprocess, sys, time
plain = "import time; time.sleep(300)"
stubborn = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); "
    "time.sleep(300)"
)
first = subprocess.Popen([sys.executable, "-c", plain])
second = subprocess.Popen([sys.executable, "-c", stubborn], stdout=subprocess.PIPE)
second.stdout.readline()
print("pids", first.pid, second.pid, flush=True)
time.sleep(300)
"""


@pytest.fixture
def tree(workspace: Path) -> str:
    """A script whose grandchildren sleep; one of them ignores SIGTERM. It prints their pids."""
    (workspace / "tree.py").write_text(TREE)
    return "tree.py"


def gone(pid: int) -> bool:
    """True when ``pid`` no longer runs code: it does not exist or is a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat[stat.rfind(")") + 2] in "ZX"


def pids_in(text: str) -> list[int]:
    for line in text.splitlines():
        if line.startswith("pids "):
            return [int(pid) for pid in line.split()[1:]]
    return []


def wait_for_pids(ctx: ToolContext, process_id: str, seen: str) -> list[int]:
    deadline = time.monotonic() + 20
    while not pids_in(seen):
        assert time.monotonic() < deadline, f"the tree never printed its pids: {seen!r}"
        time.sleep(0.05)
        seen += body(run_tool(PROCESS, ctx, action="poll", process_id=process_id))
    return pids_in(seen)


def start_tree(ctx: ToolContext, tree: str) -> tuple[str, list[int]]:
    output = run_tool(SHELL, ctx, command=f"python {tree}", yield_time_ms=0, timeout=120)
    process_id = output.data["process_id"]
    return process_id, wait_for_pids(ctx, process_id, body(output))


def test_timeout_leaves_no_process_behind(ctx: ToolContext, tree: str) -> None:
    output = run_tool(EXECUTE, ctx, argv=["python", tree], timeout=3)
    pids = pids_in(body(output))
    assert output.data["timed_out"] is True
    assert output.status == "error"
    assert len(pids) == 2
    assert all(gone(pid) for pid in pids)


def test_terminate_leaves_no_process_behind(ctx: ToolContext, registry: ProcessRegistry, tree: str) -> None:
    process_id, pids = start_tree(ctx, tree)
    leader = registry.get(process_id)
    assert leader is not None
    output = run_tool(PROCESS, ctx, action="terminate", process_id=process_id)
    assert output.data["terminated"] is True
    assert output.data["running"] is False
    assert all(gone(pid) for pid in [leader.pid, *pids])


def test_registry_shutdown_leaves_no_process_behind(ctx: ToolContext, registry: ProcessRegistry, tree: str) -> None:
    _, first_pids = start_tree(ctx, tree)
    _, second_pids = start_tree(ctx, tree)
    leaders = [process.pid for process in registry.live()]
    assert len(leaders) == 2
    registry.shutdown()
    assert registry.live() == []
    assert all(gone(pid) for pid in [*leaders, *first_pids, *second_pids])


def test_cancellation_leaves_no_process_behind(ctx: ToolContext, registry: ProcessRegistry, tree: str) -> None:
    prepared = EXECUTE.prepare(EXECUTE.input_model(argv=["python", tree]), ctx)
    with pytest.raises(TimeoutError):
        asyncio.run(asyncio.wait_for(EXECUTE.execute(prepared, ctx), 3))
    assert ctx.artifacts_dir is not None
    [artifact] = (ctx.artifacts_dir / "processes").glob("*.log")
    pids = pids_in(artifact.read_text())
    assert len(pids) == 2
    assert registry.live() == []
    assert all(gone(pid) for pid in pids)


def test_finished_command_leaves_no_background_member(ctx: ToolContext) -> None:
    output = run_tool(SHELL, ctx, command="sleep 300 & echo $!")
    assert output.data["exit_code"] == 0
    assert gone(int(body(output)))
