"""The continuation contract: shell yields a process id, process polls never replay output."""

from __future__ import annotations

import itertools
import time

import pytest

from protoagent.errors import ToolRejected
from protoagent.processes import (
    ExecuteCommandTool,
    ProcessRegistry,
    ProcessTool,
    ShellTool,
    process_tool_available,
    user_shell_call,
)
from protoagent.tools.base import ToolContext

from .support import body, run_tool

SHELL, PROCESS = ShellTool(), ProcessTool()
COUNTER = (
    "python -c \"import time\nfor i in range({n}):\n    print(f'line {{i:03d}}', flush=True); time.sleep({pause})\""
)


def expected_lines(n: int) -> str:
    return "".join(f"line {i:03d}\n" for i in range(n))


def test_repeated_poll_never_returns_bytes_already_returned(ctx: ToolContext) -> None:
    started = run_tool(SHELL, ctx, command=COUNTER.format(n=60, pause=0.01), yield_time_ms=0)
    process_id = started.data["process_id"]
    observed = [body(started)]
    ranges = [started.data["observed_bytes"]]
    deadline = time.monotonic() + 30
    while True:
        assert time.monotonic() < deadline
        polled = run_tool(PROCESS, ctx, action="poll", process_id=process_id)
        observed.append(body(polled))
        ranges.append(polled.data["observed_bytes"])
        if not polled.data["running"]:
            break
        time.sleep(0.005)
    assert "".join(observed) == expected_lines(60)
    assert all(previous[1] == current[0] for previous, current in itertools.pairwise(ranges))
    assert sum(1 for chunk in observed if chunk) > 2
    again = run_tool(PROCESS, ctx, action="poll", process_id=process_id)
    assert body(again) == ""
    assert again.text == "exit code: 0"


def test_wait_returns_new_output_once_the_process_ends(ctx: ToolContext) -> None:
    started = run_tool(SHELL, ctx, command=COUNTER.format(n=5, pause=0.1), yield_time_ms=50)
    assert started.data["running"] is True
    waited = run_tool(PROCESS, ctx, action="wait", process_id=started.data["process_id"], timeout_ms=20_000)
    assert waited.data["running"] is False
    assert body(started) + body(waited) == expected_lines(5)


def test_wait_gives_up_after_timeout_ms(ctx: ToolContext) -> None:
    started = run_tool(SHELL, ctx, command="sleep 30", yield_time_ms=0)
    begun = time.monotonic()
    waited = run_tool(PROCESS, ctx, action="wait", process_id=started.data["process_id"], timeout_ms=200)
    assert waited.data["running"] is True
    assert 0.15 < time.monotonic() - begun < 5
    assert "still running" in waited.text


def test_shell_finishing_within_yield_returns_the_observation(ctx: ToolContext, registry: ProcessRegistry) -> None:
    output = run_tool(SHELL, ctx, command="echo hi; echo oops >&2; exit 2")
    assert output.text == "exit code: 2\nhi\noops\n"
    assert output.status == "error"
    assert not process_tool_available(registry)


def test_process_tool_becomes_available_once_shell_returns_an_id(ctx: ToolContext, registry: ProcessRegistry) -> None:
    assert not process_tool_available(registry)
    output = run_tool(SHELL, ctx, command="sleep 30", yield_time_ms=0)
    assert output.data["process_id"].startswith("p_")
    assert process_tool_available(registry)
    listed = run_tool(PROCESS, ctx, action="list")
    assert [row["process_id"] for row in listed.data["processes"]] == [output.data["process_id"]]
    assert "sleep 30" in listed.text


def test_shell_timeout_holds_after_the_call_returned(ctx: ToolContext) -> None:
    started = run_tool(SHELL, ctx, command="sleep 30", yield_time_ms=0, timeout=0.5)
    waited = run_tool(PROCESS, ctx, action="wait", process_id=started.data["process_id"], timeout_ms=10_000)
    assert waited.data["timed_out"] is True
    assert waited.status == "error"


def test_unknown_process_id_is_rejected(ctx: ToolContext) -> None:
    with pytest.raises(ToolRejected) as rejected:
        PROCESS.prepare(PROCESS.input_model(action="poll", process_id="p_00000000"), ctx)
    assert rejected.value.kind == "unknown_process"


def test_commands_run_to_completion_are_not_listed(ctx: ToolContext, registry: ProcessRegistry) -> None:
    run_tool(ExecuteCommandTool(), ctx, argv=["true"])
    assert registry.listed() == []
    assert registry.live() == []


def test_user_command_goes_through_the_shell_tool(ctx: ToolContext) -> None:
    name, arguments = user_shell_call("!echo from-user")
    assert (name, arguments) == (SHELL.name, {"command": "echo from-user"})
    output = run_tool(SHELL, ctx, **arguments)
    assert output.text == "exit code: 0\nfrom-user\n"
    assert output.artifact is None and output.data["artifact"] is None  # all of it inline, no file
    with pytest.raises(ToolRejected):
        user_shell_call("!  ")
