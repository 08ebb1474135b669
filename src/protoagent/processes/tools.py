"""The process tools: ``execute_command`` (argv, to completion), ``shell`` (a command line that
may go on running) and ``process`` (list, poll, wait for and terminate what shell started).

The session wiring puts a ``ProcessRegistry`` into ``RunServices.processes`` and may put the
selected interpreter's path into ``RunServices.python`` and a ``CommandSandbox`` into
``RunServices.sandbox``. Once ``process_tool_available`` says so, it offers ``process``.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from protoagent.errors import ConfigError, ToolRejected
from protoagent.processes.command import (
    DEFAULT_OUTPUT_LIMIT,
    DEFAULT_TIMEOUT_S,
    MAX_TIMEOUT_S,
    NO_SANDBOX,
    SYSTEM_PATH,
    CommandRequest,
    CommandSite,
    PreparedCommand,
    prepare_command,
    workspace_path,
)
from protoagent.processes.live import LIVE_OUTPUT
from protoagent.processes.results import listing, observe
from protoagent.processes.runner import ProcessRegistry, session_home
from protoagent.processes.sandbox import asks_each_command
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.tools.cancellation import attach_partial_output

SHELL = "/bin/sh"
DEFAULT_YIELD_MS = 10_000
TIMEOUT_HINT = f"[to run longer, pass timeout (seconds, at most {MAX_TIMEOUT_S:g})]"
"""Told after an ``execute_command`` that ran out of time: ``timeout`` is valid but not declared."""
MAX_WAIT_MS = 3_600_000


class ExecuteCommandInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    """Only ``argv`` is declared: the other arguments are valid and rarely needed, and a model
    learns of ``timeout`` from the result of a command that ran out of it."""

    argv: list[str]
    cwd: SkipJsonSchema[str] = "."
    """Project-relative."""
    timeout: SkipJsonSchema[float] = DEFAULT_TIMEOUT_S
    """Seconds."""
    env: SkipJsonSchema[dict[str, str]] = Field(default_factory=dict)
    """The child's only variables, PATH included."""
    output_limit: SkipJsonSchema[int] = DEFAULT_OUTPUT_LIMIT
    """Bytes of output shown; a longer output is cut with a marker naming the artifact that keeps it."""


class ShellInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(description="A non-interactive command line for /bin/sh -c.")
    cwd: str = Field(".", description="Project-relative working directory.")
    yield_time_ms: int = Field(DEFAULT_YIELD_MS, description="How long to wait before returning a process id.")
    timeout: float = Field(DEFAULT_TIMEOUT_S, description="Seconds before the command is stopped.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra variables (PATH has a default).")
    output_limit: int = Field(DEFAULT_OUTPUT_LIMIT, description="Bytes of output shown per observation.")


class ProcessInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["list", "poll", "wait", "terminate"]
    process_id: str | None = Field(None, description="The id shell returned (not needed for list).")
    timeout_ms: int = Field(DEFAULT_YIELD_MS, description="How long wait blocks.")


@dataclass(frozen=True, slots=True)
class _Launch:
    command: PreparedCommand
    label: str
    yield_s: float | None
    """None: run to completion; otherwise return a process id after this many seconds."""


class ExecuteCommandTool(Tool[ExecuteCommandInput]):
    name: ClassVar[str] = "execute_command"
    description: ClassVar[str] = "Run one program (argv, no shell)."
    metadata: ClassVar[ToolMetadata] = ToolMetadata(effect="execute", presentation="terminal")

    def prepare(self, args: ExecuteCommandInput, ctx: ToolContext) -> Prepared:
        request = CommandRequest(args.argv, args.cwd, args.env, args.timeout, args.output_limit)
        command = prepare_command(request, command_site(ctx))
        launch = _Launch(command, shlex.join(args.argv), None)
        return Prepared(command.preview(), "execute", inside_workspace=confined(command), state=launch)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        out = await _launch(prepared, ctx, listed=False)
        if not out.data.get("timed_out"):
            return out
        return replace(out, text=f"{out.text}\n{TIMEOUT_HINT}")


class ShellTool(Tool[ShellInput]):
    name: ClassVar[str] = "shell"
    description: ClassVar[str] = (
        "Run a non-interactive command line with /bin/sh -c. If it is still running after "
        "yield_time_ms, you get a process id to use with the process tool."
    )
    metadata: ClassVar[ToolMetadata] = ToolMetadata(effect="execute", presentation="terminal")

    def prepare(self, args: ShellInput, ctx: ToolContext) -> Prepared:
        if not args.command.strip():
            raise ToolRejected("command is empty; give a command line", kind="invalid_arguments")
        if not 0 <= args.yield_time_ms <= MAX_WAIT_MS:
            raise ToolRejected(
                f"yield_time_ms {args.yield_time_ms!r} is out of range; give 0 to {MAX_WAIT_MS}",
                kind="invalid_limit",
            )
        site = command_site(ctx)
        env = {"PATH": shell_path(site), **args.env}
        request = CommandRequest([SHELL, "-c", args.command], args.cwd, env, args.timeout, args.output_limit)
        command = prepare_command(request, site)
        preview = f"{command.preview()}\nyield: {args.yield_time_ms} ms"
        launch = _Launch(command, args.command, args.yield_time_ms / 1000)
        return Prepared(preview, "execute", inside_workspace=confined(command), state=launch)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        return await _launch(prepared, ctx, listed=True)


class ProcessTool(Tool[ProcessInput]):
    name: ClassVar[str] = "process"
    description: ClassVar[str] = (
        "Manage commands shell left running: list them, poll (new output, no waiting), wait up to "
        "timeout_ms, or terminate the whole process group. Output is never shown twice."
    )
    metadata: ClassVar[ToolMetadata] = ToolMetadata(effect="read", presentation="terminal")

    def prepare(self, args: ProcessInput, ctx: ToolContext) -> Prepared:
        registry = process_registry(ctx)
        if not 0 <= args.timeout_ms <= MAX_WAIT_MS:
            raise ToolRejected(
                f"timeout_ms {args.timeout_ms!r} is out of range; give 0 to {MAX_WAIT_MS}", kind="invalid_limit"
            )
        if args.action == "list":
            return Prepared("process list", "read", state=args)
        known = [process.id for process in registry.listed()]
        if args.process_id is None or registry.get(args.process_id) is None:
            raise ToolRejected(
                f"process_id {args.process_id!r} names no process of this session; known: {known}",
                kind="unknown_process",
                details={"process_ids": known},
            )
        return Prepared(f"process {args.action} {args.process_id}", "read", state=args)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        args: ProcessInput = prepared.state
        registry = process_registry(ctx)
        if args.action == "list":
            processes = registry.listed()
            rows = [{"process_id": p.id, "running": p.running, "command": p.label} for p in processes]
            return ToolOutput(listing(processes), data={"processes": rows})
        process = registry.get(args.process_id or "")
        if process is None:
            raise ToolRejected(f"process_id {args.process_id!r} is no longer known", kind="unknown_process")
        if args.action == "wait":
            await process.wait(args.timeout_ms / 1000)
        elif args.action == "terminate":
            await process.terminate()
        return observe(process)


def process_registry(ctx: ToolContext) -> ProcessRegistry:
    """The session's registry; its absence is a wiring mistake, not something a model can fix."""
    registry = ctx.services.processes
    if registry is None:
        raise ConfigError("the session wiring must put a ProcessRegistry into RunServices.processes")
    return registry


def command_site(ctx: ToolContext) -> CommandSite:
    """Root, session HOME, interpreter selection (default: this interpreter) and sandbox of ``ctx``."""
    artifacts_dir = process_registry(ctx).artifacts_dir(ctx.artifacts_dir)
    python = ctx.services.python or sys.executable
    sandbox = ctx.services.sandbox or NO_SANDBOX
    return CommandSite(ctx.root, session_home(artifacts_dir), str(python), sandbox)


def confined(command: PreparedCommand) -> bool:
    """False when no sandbox confines ``command`` to the workspace and a person must approve it
    (``--sandbox auto`` without a backend): the approval policy then never allows it alone."""
    return not asks_each_command(command.sandbox)


def shell_path(site: CommandSite) -> str:
    """The shell's default PATH: the selected interpreter's folder, then the system search path."""
    interpreter_dir = os.path.dirname(workspace_path(site.python, site.root))
    return f"{interpreter_dir}{os.pathsep}{SYSTEM_PATH}"


async def _launch(prepared: Prepared, ctx: ToolContext, *, listed: bool) -> ToolOutput:
    launch: _Launch = prepared.state
    registry = process_registry(ctx)
    try:
        artifacts_dir = registry.artifacts_dir(ctx.artifacts_dir)
        process = registry.start(launch.command, artifacts_dir=artifacts_dir, label=launch.label, listed=listed)
    except OSError as error:
        return ToolOutput(
            f"could not start {launch.command.executable!r}: {error.strerror or error}",
            status="error",
            data={"argv": list(launch.command.argv), "cwd": str(launch.command.cwd), "exit_code": None},
        )
    try:
        with LIVE_OUTPUT.watching(ctx.session_id, ctx.call_id, process.journal):
            finished = await process.wait(launch.yield_s)
    except asyncio.CancelledError as cancelled:
        process.kill()
        attach_partial_output(cancelled, observe(process))  # the call's tool.ended keeps the output so far
        raise
    finally:
        if not listed:
            registry.forget(process.id)
    if not finished:
        registry.deferred = True
    return observe(process)


def process_tool_available(registry: ProcessRegistry) -> bool:
    """Whether the session should offer the ``process`` tool (a shell call left a process running)."""
    return registry.deferred


def user_shell_call(command: str) -> tuple[str, dict[str, Any]]:
    """Map a person's ``!command`` to the shell call that runs it through the same pipeline."""
    line = command.strip().removeprefix("!").strip()
    if not line:
        raise ToolRejected("the command after '!' is empty", kind="invalid_arguments")
    return ShellTool.name, {"command": line}


PROCESS_TOOLS: tuple[type[Tool[Any]], ...] = (ExecuteCommandTool, ShellTool, ProcessTool)
"""The process tool classes; the session instantiates them (and offers ``process`` when available)."""
