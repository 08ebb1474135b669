"""A command costs less without losing output: its artifact file is written only when the output
needs one, and its supervisor (no thread of its own) copies the output and sees the exit."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from protoagent.processes import ExecuteCommandTool, ProcessRegistry, ProcessTool, ShellTool
from protoagent.processes.artifact_cap import ArtifactCaps
from protoagent.processes.command import CommandRequest, CommandSite, prepare_command
from protoagent.processes.runner import ManagedProcess
from protoagent.tools.base import Tool, ToolContext, ToolOutput
from protoagent.tools.services import RunServices

EXECUTE, SHELL, PROCESS = ExecuteCommandTool(), ShellTool(), ProcessTool()


@pytest.fixture
def registry() -> Iterator[ProcessRegistry]:
    registry = ProcessRegistry(grace_s=0.5)
    yield registry
    registry.shutdown()


@pytest.fixture
def ctx(tmp_path: Path, registry: ProcessRegistry) -> ToolContext:
    root = tmp_path / "repo"
    root.mkdir()
    return ToolContext(
        "s-test",
        "c-test",
        root.resolve(),
        artifacts_dir=tmp_path / "artifacts",
        services=RunServices(processes=registry),
    )


def run(tool: Tool[Any], ctx: ToolContext, **arguments: object) -> ToolOutput:
    return asyncio.run(tool.execute(tool.prepare(tool.input_model(**arguments), ctx), ctx))


def artifacts(ctx: ToolContext) -> list[Path]:
    assert ctx.artifacts_dir is not None
    return sorted((ctx.artifacts_dir / "processes").glob("*.log"))


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_output_that_fits_the_inline_limit_writes_no_artifact_file(ctx: ToolContext) -> None:
    output = run(EXECUTE, ctx, argv=python("print('small')"))
    assert output.text == "exit code: 0\nsmall\n"
    assert output.artifact is None and output.data["artifact"] is None
    assert artifacts(ctx) == []


def test_output_past_the_inline_limit_is_kept_whole_in_the_artifact(ctx: ToolContext) -> None:
    output = run(EXECUTE, ctx, argv=python("for i in range(500): print(f'line {i:04d}')"), output_limit=1000)
    [artifact] = artifacts(ctx)
    assert output.artifact == output.data["artifact"] == str(artifact)
    assert artifact.read_text() == "".join(f"line {i:04d}\n" for i in range(500))
    assert f"full output: {artifact}" in output.text


def test_output_at_exactly_the_inline_limit_stays_inline(ctx: ToolContext) -> None:
    output = run(EXECUTE, ctx, argv=python("import sys; sys.stdout.write('x' * 1000)"), output_limit=1000)
    assert output.artifact is None and output.text.endswith("x" * 1000)
    assert artifacts(ctx) == []


def test_output_that_is_not_utf8_keeps_its_raw_bytes_in_an_artifact(ctx: ToolContext) -> None:
    output = run(EXECUTE, ctx, argv=python("import sys; sys.stdout.buffer.write(b'a\\xffb')"))
    [artifact] = artifacts(ctx)
    assert output.artifact == str(artifact) and artifact.read_bytes() == b"a\xffb"


def test_a_running_command_is_observed_from_memory_and_its_file_appears_when_output_grows(
    ctx: ToolContext, registry: ProcessRegistry
) -> None:
    grow = "import sys, time\nprint('first', flush=True)\nsys.stdin.close()\ntime.sleep(0.5)\nprint('y' * 20000)"
    started = run(SHELL, ctx, command=f"python -c {shlex.quote(grow)}", yield_time_ms=200)
    assert started.data["running"] is True and started.data["artifact"] is None
    assert started.text.endswith("\nfirst\n") and artifacts(ctx) == []
    finished = run(PROCESS, ctx, action="wait", process_id=started.data["process_id"], timeout_ms=10_000)
    [artifact] = artifacts(ctx)
    assert finished.data["running"] is False and finished.artifact == str(artifact)
    assert artifact.read_text() == "first\n" + "y" * 20000 + "\n"


def test_output_nobody_observed_is_kept_when_the_registry_shuts_down(
    ctx: ToolContext, registry: ProcessRegistry
) -> None:
    started = run(SHELL, ctx, command="sleep 0.3; echo late", yield_time_ms=0)
    process = registry.get(started.data["process_id"])
    assert process is not None and process.wait_sync(10)
    assert artifacts(ctx) == []
    registry.shutdown()
    [artifact] = artifacts(ctx)
    assert artifact.read_text() == "late\n"


def test_the_journal_path_writes_the_file_for_a_caller_that_reads_it(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    site = CommandSite(tmp_path, tmp_path / "home", sys.executable)
    command = prepare_command(CommandRequest(python("print('check output')"), ".", {}, 30.0, 4096), site)
    process = registry.start(command, artifacts_dir=tmp_path / "artifacts", label="check", listed=False)
    assert process.wait_sync(10)
    assert process.journal.artifact is None
    assert process.journal.path.read_text() == "check output\n"
    assert process.journal.artifact == process.journal.path


def test_an_inline_output_does_not_count_against_the_session_total(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    site = CommandSite(tmp_path, tmp_path / "home", sys.executable)
    folder = tmp_path / "artifacts" / "processes"
    before = ArtifactCaps().for_artifact_in(folder)
    command = prepare_command(CommandRequest(python("print('x' * 100)"), ".", {}, 30.0, 4096), site)
    process = registry.start(command, artifacts_dir=tmp_path / "artifacts", label="small", listed=False)
    assert process.wait_sync(10)
    assert ArtifactCaps().for_artifact_in(folder) == before


def started(registry: ProcessRegistry, tmp_path: Path, code: str, timeout_s: float = 30.0) -> ManagedProcess:
    site = CommandSite(tmp_path, tmp_path / "home", sys.executable)
    command = prepare_command(CommandRequest(python(code), ".", {}, timeout_s, 4096), site)
    return registry.start(command, artifacts_dir=tmp_path / "artifacts", label="t", listed=True)


def test_without_process_descriptors_exits_and_timeouts_are_still_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "pidfd_open")
    registry = ProcessRegistry(grace_s=0.5)
    quick = started(registry, tmp_path, "print('done')")
    assert asyncio.run(quick.wait(10)) is True
    assert quick.state().exit_code == 0 and quick.journal.consume(100, settled=True).text == "done\n"
    slow = started(registry, tmp_path, "import time; time.sleep(30)", timeout_s=0.3)
    assert asyncio.run(slow.wait(10)) is True
    assert slow.state().timed_out and slow.state().exit_code is not None


def test_output_written_while_the_group_is_stopped_is_kept(tmp_path: Path) -> None:
    """A command that prints a lot when told to stop keeps that output: the supervisor copies
    the pipe while it waits for the group to end."""
    on_term = (
        "import signal, sys, time\n"
        "def bye(*_):\n    sys.stdout.write('z' * 300_000 + '\\nbye\\n'); sys.stdout.flush(); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\nprint('ready', flush=True)\ntime.sleep(30)"
    )
    registry = ProcessRegistry(grace_s=5)
    process = started(registry, tmp_path, on_term, timeout_s=0.5)
    assert asyncio.run(process.wait(20)) is True
    state = process.state()
    assert state.timed_out and state.exit_code == 0
    text = process.journal.path.read_text()
    assert text.startswith("ready\n") and text.endswith("\nbye\n")
