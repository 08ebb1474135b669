"""Preview servers: a dev server started for the person to look at, with its own lifecycle.

``preview`` (start, status, logs, stop) runs a command line on the same journalled process runtime
as ``shell`` (sandbox, process group, output journal), but in a ``PreviewRegistry`` of its own:
previews never appear in the ``process`` tool's registry, and ``process`` cannot stop them. The
session puts one into ``RunServices.previews`` and shuts it down (every preview's
whole process group) when its run ends, as the server and the ACP process do on exit.

A preview listens on loopback: its sandbox is the session's with networking on, so no approval
policy allows a start alone (``--approval auto`` asks too; nobody to ask denies it, and no
"for this session" rule covers the next one). ``PORT`` names the port it was asked to serve on.
The URL is in the call's receipt (``data["url"]``), which the web UI and chat show.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from protoagent.errors import ConfigError, ToolRejected
from protoagent.processes.command import MAX_TIMEOUT_S, CommandRequest, PreparedCommand, prepare_command
from protoagent.processes.runner import ManagedProcess, ProcessRegistry
from protoagent.processes.tools import SHELL, command_site, shell_path
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput

MAX_PREVIEWS = 4
READY_WAIT_S = 15.0
"""How long ``start`` waits for the port to accept connections before reporting."""
LOG_LIMIT = 8000
LOOPBACK = "127.0.0.1"


class PreviewInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["start", "status", "logs", "stop"]
    command: str = Field("", description="start: the server's command line (/bin/sh -c); $PORT names the port.")
    port: int = Field(0, description="start: the loopback port it serves on (1024-65535).")
    cwd: str = Field(".", description="start: project-relative working directory.")
    preview_id: str | None = Field(None, description="status/logs/stop: the id start returned (default: the only one).")


@dataclass(slots=True)
class Preview:
    """One started preview server."""

    process: ManagedProcess
    port: int

    @property
    def id(self) -> str:
        return self.process.id

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/"


class PreviewRegistry:
    """The session's preview servers, apart from the model's command processes."""

    def __init__(self, *, grace_s: float = 2.0) -> None:
        self.processes = ProcessRegistry(grace_s=grace_s)
        self._previews: dict[str, Preview] = {}
        self._lock = threading.Lock()

    def start(self, command: PreparedCommand, port: int, artifacts_dir: Any, label: str) -> Preview:
        with self._lock:
            if sum(1 for p in self._previews.values() if p.process.running) >= MAX_PREVIEWS:
                raise ToolRejected(f"{MAX_PREVIEWS} previews are running; stop one first", kind="too_many_previews")
        process = self.processes.start(command, artifacts_dir=artifacts_dir, label=label, listed=True)
        preview = Preview(process, port)
        with self._lock:
            self._previews[preview.id] = preview
        return preview

    def get(self, preview_id: str | None) -> Preview:
        with self._lock:
            known = list(self._previews)
            if preview_id is None and len(known) == 1:
                return self._previews[known[0]]
            found = self._previews.get(preview_id or "")
        if found is None:
            raise ToolRejected(
                f"preview_id {preview_id!r} names no preview of this session; known: {known}",
                kind="unknown_preview",
                details={"preview_ids": known},
            )
        return found

    def listed(self) -> list[Preview]:
        with self._lock:
            return list(self._previews.values())

    def shutdown(self) -> None:
        """Stop every preview's process group (SIGTERM, grace, SIGKILL); refuse new starts."""
        self.processes.shutdown()


def preview_registry(ctx: ToolContext) -> PreviewRegistry:
    registry = ctx.services.previews
    if registry is None:
        raise ConfigError("the session wiring must put a PreviewRegistry into RunServices.previews")
    return registry


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((LOOPBACK, port)) == 0


@dataclass(frozen=True, slots=True)
class _Start:
    command: PreparedCommand
    port: int
    label: str


class PreviewTool(Tool[PreviewInput]):
    name: ClassVar[str] = "preview"
    description: ClassVar[str] = (
        "Run a dev server for the user to look at, on a loopback port: start (command, port), "
        "status, logs (new output), stop. It runs until stopped or the run ends."
    )
    metadata: ClassVar[ToolMetadata] = ToolMetadata(effect="execute", presentation="terminal")

    def prepare(self, args: PreviewInput, ctx: ToolContext) -> Prepared:
        registry = preview_registry(ctx)
        if args.action != "start":
            known = registry.get(args.preview_id)
            return Prepared(f"preview {args.action} {known.id}", "read", state=args)
        if not args.command.strip():
            raise ToolRejected("start needs a command, e.g. 'python -m http.server $PORT'", kind="invalid_arguments")
        if not 1024 <= args.port <= 65535:
            raise ToolRejected(f"port {args.port!r} is out of range; give 1024 to 65535", kind="invalid_limit")
        if not port_free(args.port):
            raise ToolRejected(f"port {args.port} is already in use on {LOOPBACK}; choose another", kind="port_in_use")
        site = command_site(ctx)
        sandbox = site.sandbox
        if dataclasses.is_dataclass(sandbox) and hasattr(sandbox, "network"):
            # A preview is reached from the host's loopback: it shares the host's network.
            site = dataclasses.replace(site, sandbox=dataclasses.replace(sandbox, network=True))
        env = {"PATH": shell_path(site), "PORT": str(args.port)}
        request = CommandRequest([SHELL, "-c", args.command], args.cwd, env, MAX_TIMEOUT_S, LOG_LIMIT)
        command = prepare_command(request, site)
        preview = f"{command.preview()}\npreview on http://{LOOPBACK}:{args.port}/ until stopped or the run ends"
        state = _Start(command, args.port, args.command)
        # Networking on is more than a sandboxed command gets: no policy allows it alone, a person does.
        external = f"a preview server with network access on port {args.port}"
        return Prepared(preview, "execute", inside_workspace=False, state=state, external=external)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        registry = preview_registry(ctx)
        if isinstance(prepared.state, _Start):
            return await _start(registry, prepared.state, ctx)
        args: PreviewInput = prepared.state
        preview = registry.get(args.preview_id)
        if args.action == "stop":
            await preview.process.terminate()
        return report(preview, logs=args.action != "status")


async def _start(registry: PreviewRegistry, start: _Start, ctx: ToolContext) -> ToolOutput:
    artifacts_dir = registry.processes.artifacts_dir(ctx.artifacts_dir)
    try:
        preview = registry.start(start.command, start.port, artifacts_dir, start.label)
    except OSError as error:
        return ToolOutput(f"could not start the preview: {error.strerror or error}", status="error")
    deadline = time.monotonic() + READY_WAIT_S
    while preview.process.running and not port_open(preview.port) and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.1)  # a port has no readiness event to wait on
    return report(preview, logs=True)


def report(preview: Preview, *, logs: bool) -> ToolOutput:
    """One status line, then (for start and logs) the output since the last look."""
    process = preview.process
    state = process.state()
    listening = state.running and port_open(preview.port)
    if state.running:
        line = f"preview {preview.id} {'serving' if listening else 'starting, not yet listening on'} {preview.url}"
    else:
        line = f"preview {preview.id} stopped (exit code {state.exit_code}); {preview.url} is gone"
    text = line
    if logs:
        observation = process.journal.consume(LOG_LIMIT, settled=not state.running)
        if observation.text:
            text = f"{line}\n{observation.text}"
    data = {
        "preview_id": preview.id,
        "url": preview.url,
        "port": preview.port,
        "running": state.running,
        "listening": listening,
        "exit_code": state.exit_code,
        "pid": process.pid,
    }
    artifact = process.journal.artifact
    failed = not state.running and not state.terminated and state.exit_code != 0
    return ToolOutput(
        text, status="error" if failed else "ok", data=data, artifact=None if artifact is None else str(artifact)
    )


PREVIEW_TOOLS: tuple[type[Tool[Any]], ...] = (PreviewTool,)
