"""``MCPConnection``: one live session with one MCP server, kept for a whole run.

A background task owns the transport (stdio process, Streamable HTTP or SSE) and the SDK's
``ClientSession``, because their task groups must be entered and left in the same task;
calls reach it through a queue. ``close`` leaves the session: stdin closes, then the SDK
terminates and reaps the server's process group. Before initialization finishes, a line on
stdout that is not JSON-RPC fails the start at once, naming that line.

A stdio server declared by the repository runs inside the command sandbox, like a command
(its own ``HOME`` and ``TMPDIR``, its working directory inside the workspace); every stdio
server gets the git overrides of ``mcp_git``, so git ignores the repository's configured programs.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar, cast

from protoagent.errors import ConfigError
from protoagent.integrations.mcp_config import MCPServerSpec
from protoagent.integrations.mcp_git import git_safe_env
from protoagent.processes.command import CommandSandbox
from protoagent.processes.sandbox import SandboxScope

if TYPE_CHECKING:
    from mcp import ClientSession

T = TypeVar("T")
Action = Callable[["ClientSession"], Awaitable[Any]]
CLOSE_TIMEOUT_S = 5.0


class MCPFailure(Exception):
    """A server could not be started or failed mid-session: reported as an error output."""


class ProtocolNoise(Exception):
    """The server wrote something other than JSON-RPC to stdout."""


@dataclass(frozen=True, slots=True)
class Confinement:
    """How stdio servers are started: the run's sandbox with a HOME and temp for a repository's
    servers, and the folder of the ``git`` every server finds first (``mcp_git.write_git_shim``)."""

    sandbox: CommandSandbox
    home: Path
    tmp: Path
    git_shim: Path | None = None


class MCPConnection:
    """A started server and its initialized session; ``call`` runs one action on it."""

    def __init__(self, spec: MCPServerSpec, root: Path, confinement: Confinement | None = None) -> None:
        self.spec = spec
        self.root = root
        self.confinement = confinement
        self.starts = 0
        self._queue: asyncio.Queue[tuple[Action, asyncio.Future[Any]] | None] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[None] | None = None
        self._errlog = cast(TextIO, tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))

    @property
    def alive(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        """Start the server and initialize, within the server's timeout."""
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self.starts += 1
        self._task = loop.create_task(self._serve(), name=f"mcp-{self.spec.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), self.spec.timeout_s)
        except TimeoutError:
            await self.close()
            raise self._failure(TimeoutError()) from None
        except Exception as exc:
            await self.close()
            raise self._failure(exc) from None

    async def call(self, action: Action) -> Any:
        """Run ``action`` on the session within the server's timeout; a timeout ends the session."""
        if not self.alive:
            raise MCPFailure(f"{self.spec.describe()} is not running")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        await self._queue.put((action, future))
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.spec.timeout_s)
        except TimeoutError:
            await self.close()
            raise self._failure(TimeoutError()) from None
        except MCPFailure:
            raise
        except Exception as exc:
            if not self.alive or _connection_lost(exc):
                await self.close()
            raise self._failure(exc) from None

    async def close(self) -> None:
        """Leave the session and stop the server; bounded, and shielded from cancellation."""
        task = self._task
        if task is None:
            return
        if not task.done():
            self._queue.put_nowait(None)
            try:
                await asyncio.shield(asyncio.wait_for(asyncio.shield(task), CLOSE_TIMEOUT_S))
            except (TimeoutError, asyncio.CancelledError):
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
            except Exception:
                pass  # the failure was already reported to the caller that saw it
        self._task = None

    def release(self) -> None:
        """Close the stderr capture once the connection is no longer needed."""
        self._errlog.close()

    def stderr_tail(self, limit: int = 600) -> str:
        self._errlog.flush()
        self._errlog.seek(0)
        text = self._errlog.read().strip()
        self._errlog.seek(0, 2)
        return f"\nserver stderr (last {limit} characters):\n{text[-limit:]}" if text else ""

    def _failure(self, exc: BaseException) -> MCPFailure:
        leaf = _leaf(exc)
        return MCPFailure(f"{self.spec.describe()} failed: {_explain(leaf, self.spec.timeout_s)}{self.stderr_tail()}")

    async def _serve(self) -> None:
        ready = self._ready
        assert ready is not None
        try:
            async with AsyncExitStack() as stack:
                session = await self._open(stack)
                if not ready.done():
                    ready.set_result(None)
                await self._loop(session)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else MCPFailure("the start was cancelled"))
            self._fail_pending(exc)
            if not isinstance(exc, Exception):
                raise

    async def _open(self, stack: AsyncExitStack) -> ClientSession:
        try:
            import anyio
            from mcp import ClientSession
        except ImportError:
            raise ConfigError("MCP servers need the mcp SDK: install protoagent[mcp]") from None
        read, write = await stack.enter_async_context(_transport(self.spec, self.root, self.confinement, self._errlog))
        checked_send, checked = anyio.create_memory_object_stream[Any](0)
        group = await stack.enter_async_context(anyio.create_task_group())
        stack.callback(group.cancel_scope.cancel)
        state = {"initialized": False}
        group.start_soon(_screen, read, checked_send, state)
        session = await stack.enter_async_context(ClientSession(checked, write))
        await session.initialize()
        state["initialized"] = True
        return session

    async def _loop(self, session: ClientSession) -> None:
        while True:
            item = await self._queue.get()
            if item is None:
                return
            action, future = item
            try:
                result = await action(session)
            except Exception as exc:
                if not future.done():
                    future.set_exception(exc)
                continue
            if not future.done():
                future.set_result(result)

    def _fail_pending(self, exc: BaseException) -> None:
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not None and not item[1].done():
                item[1].set_exception(self._failure(exc))


async def _screen(source: Any, sink: Any, state: dict[str, bool]) -> None:
    """Forward the server's messages; text that is not JSON-RPC before initialization fails fast."""
    async with sink:
        async for item in source:
            if isinstance(item, Exception) and not state["initialized"]:
                raise ProtocolNoise(_offending_line(item))
            await sink.send(item)


def _offending_line(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            found = errors()
        except Exception:
            found = []
        for error in found:
            text = error.get("input")
            if isinstance(text, str):
                return text[:200]
    return str(exc).splitlines()[0][:200]


def _transport(spec: MCPServerSpec, root: Path, confinement: Confinement | None, errlog: TextIO) -> Any:
    """The SDK's client transport for the server: a context manager yielding (read, write)."""
    if spec.transport == "stdio":
        from mcp import StdioServerParameters, stdio_client

        _quiet_sdk_logs()
        argv, env, cwd = stdio_launch(spec, root, confinement)
        params = StdioServerParameters(command=argv[0], args=list(argv[1:]), env=env, cwd=cwd)
        return stdio_client(params, errlog=errlog)
    from mcp.shared._httpx_utils import create_mcp_http_client

    if spec.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(spec.url, headers=spec.headers or None, timeout=spec.timeout_s)
    from mcp.client.streamable_http import streamable_http_client

    client = create_mcp_http_client(headers=spec.headers or None)
    return _with_client(client, streamable_http_client(spec.url, http_client=client))


def stdio_launch(
    spec: MCPServerSpec, root: Path, confinement: Confinement | None
) -> tuple[tuple[str, ...], dict[str, str], Path]:
    """The argv, extra environment and cwd a stdio server is spawned with; a repository's server
    is wrapped in the sandbox and may not name a working directory outside the workspace."""
    base = root.resolve()
    cwd = (base / spec.cwd).resolve() if spec.cwd else base
    env = git_safe_env(cwd, spec.env, confinement.git_shim if confinement is not None else None)
    if spec.origin != "workspace":
        return spec.command, env, cwd
    if cwd != base and not cwd.is_relative_to(base):
        raise MCPFailure(f"{spec.describe()}: its cwd {spec.cwd!r} lies outside the workspace; it is not started")
    if confinement is None:
        raise MCPFailure(f"{spec.describe()}: a repository's server starts only inside the run's sandbox")
    for folder in (confinement.home, confinement.tmp):
        folder.mkdir(parents=True, exist_ok=True)
    scope = SandboxScope(base, confinement.home, confinement.tmp, cwd)
    env |= {"HOME": str(confinement.home), "TMPDIR": str(confinement.tmp)}
    return confinement.sandbox.wrap(spec.command, scope), env, cwd


def _with_client(client: Any, transport: Any) -> Any:
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def both() -> Any:
        async with client, transport as streams:
            yield streams[0], streams[1]

    return both()


def _quiet_sdk_logs() -> None:
    """The SDK logs a traceback per unparsable stdout line; the failure message names it instead."""
    logger = logging.getLogger("mcp.client.stdio")
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())
        logger.propagate = False


def _connection_lost(exc: BaseException) -> bool:
    """The session cannot be used again (the server went away); it is restarted on next use."""
    error = getattr(exc, "error", None)
    code = getattr(error, "code", None)
    from mcp.types import CONNECTION_CLOSED

    return code == CONNECTION_CLOSED or isinstance(exc, OSError | EOFError)


def _leaf(exc: BaseException) -> BaseException:
    """The one real error inside the task groups' nested exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def _explain(exc: BaseException, timeout_s: float) -> str:
    if isinstance(exc, MCPFailure):
        return str(exc)
    if isinstance(exc, ProtocolNoise):
        return f"it wrote non-protocol text to stdout during startup: {str(exc)!r}; servers must log to stderr"
    if isinstance(exc, TimeoutError):
        return f"no answer within {timeout_s:g} s"
    if isinstance(exc, FileNotFoundError):
        return f"the command was not found ({exc}); check the server's command"
    return f"{type(exc).__name__}: {exc}"
