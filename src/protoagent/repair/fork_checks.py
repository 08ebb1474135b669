"""Scratch checks of ``<python> -m pytest ...`` through one fork server per check and repair.

Pytest's start-up (its own modules and the installed plugins) dominates a small check's time;
the server (``repair.fork_server``) pays it once and forks a child per candidate that imports
the workspace fresh from disk. The server is one command of the session's process registry,
prepared like the check (its interpreter, cwd, environment and the run's sandbox), so Stop and
Ctrl-C stop it and its children with everything else. Requests and replies pass through two
FIFOs in the scratch copy's temp folder. A server that does not come up, dies, or runs past a
candidate's time limit is stopped; the caller then runs that candidate as its own command.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from protoagent.checks.run_check import read_output
from protoagent.errors import RunError, ToolRejected
from protoagent.processes.command import CommandRequest, CommandSite, prepare_command
from protoagent.processes.runner import ManagedProcess, ProcessRegistry
from protoagent.repair import fork_server

SOURCE = Path(fork_server.__file__).read_text(encoding="utf-8")
START_S = 30.0
"""How long a server may take to import pytest and its plugins before it is given up."""
SERVER_LIFETIME_S = 3600.0
"""The server command's own time limit (a repair ends long before; closing stops it)."""


class ForkFailed(Exception):
    """The fork server could not run this candidate; the caller runs it as its own command."""


@dataclass(frozen=True, slots=True)
class ForkRun:
    exit_code: int | None
    output: str
    timed_out: bool


class ForkServer:
    """One running server for one check; ``run`` forks a child per call, one at a time."""

    def __init__(self, process: ManagedProcess, requests: int, replies: int, folder: Path) -> None:
        self._process = process
        self._requests = requests
        self._replies = replies
        self._folder = folder
        self._buffer = b""
        self._next = 0

    @classmethod
    async def start(
        cls, argv: tuple[str, ...], request: CommandRequest, site: CommandSite, processes: ProcessRegistry, base: Path
    ) -> ForkServer:
        """Start the server for the check ``request`` (its argv is ``argv``) and wait until it is ready."""
        folder = Path(tempfile.mkdtemp(prefix="protoagent-fork-", dir=site.tmp))
        requests_path, replies_path = folder / "requests", folder / "replies"
        os.mkfifo(requests_path, 0o600)
        os.mkfifo(replies_path, 0o600)
        server_argv = (argv[0], "-c", SOURCE, str(requests_path), str(replies_path), str(site.root), *argv[3:])
        server = CommandRequest(server_argv, request.cwd, request.env, SERVER_LIFETIME_S, request.output_limit)
        try:
            command = prepare_command(server, site)
            label = f"{argv[0]} -m pytest (fork server)"
            process = processes.start(command, artifacts_dir=base, label=label, listed=False)
        except (ToolRejected, OSError, RunError) as error:
            raise ForkFailed(f"the fork server did not start: {error}") from None
        # O_RDWR: neither open waits for the other side (Linux FIFOs), and our own read end keeps
        # the replies FIFO open, so a dead server is seen through its process, not an EOF.
        requests_fd = os.open(requests_path, os.O_RDWR)
        started = cls(process, requests_fd, os.open(replies_path, os.O_RDWR | os.O_NONBLOCK), folder)
        try:
            await started._reply(START_S)
        except (ForkFailed, TimeoutError):
            started.close()
            raise ForkFailed("the fork server did not come up") from None
        except asyncio.CancelledError:
            started.close()
            raise
        return started

    @property
    def alive(self) -> bool:
        return self._process.running

    async def run(self, args: tuple[str, ...], timeout_s: float) -> ForkRun:
        """Run pytest with ``args`` in a fresh child; a timeout stops the server (``timed_out``)."""
        self._next += 1
        output = self._folder / f"run-{self._next}.log"
        line = json.dumps({"id": self._next, "args": list(args), "output": str(output)}) + "\n"
        try:
            os.write(self._requests, line.encode())
            reply = await self._reply(timeout_s)
        except TimeoutError:
            self.close()
            return ForkRun(None, _read(output), True)
        except (ForkFailed, OSError) as failed:
            self.close()
            raise ForkFailed(f"the fork server failed: {failed}") from None
        except asyncio.CancelledError:
            self.close()
            raise
        text = _read(output)
        with contextlib.suppress(OSError):
            output.unlink()
        status = reply.get("status")
        if reply.get("id") != self._next or not isinstance(status, int):
            self.close()
            raise ForkFailed("the fork server answered out of turn")
        return ForkRun(status, text, False)

    def close(self) -> None:
        """Stop the server's whole group and forget it."""
        self._process.kill()
        for fd in (self._requests, self._replies):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._requests = self._replies = -1

    async def _reply(self, timeout_s: float) -> dict[str, object]:
        """The server's next reply line; ``TimeoutError`` past ``timeout_s``, ``ForkFailed`` if it died."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while b"\n" not in self._buffer:
            if not self._process.running:
                raise ForkFailed("the fork server ended")
            readable: asyncio.Future[None] = loop.create_future()
            loop.add_reader(self._replies, _settle, readable)
            ended: asyncio.Future[bool] = asyncio.ensure_future(self._process.wait(None))
            try:
                left = deadline - loop.time()
                if left <= 0:
                    raise TimeoutError
                await asyncio.wait((readable, ended), timeout=left, return_when=asyncio.FIRST_COMPLETED)
            finally:
                loop.remove_reader(self._replies)
                ended.cancel()
            with contextlib.suppress(BlockingIOError):
                self._buffer += os.read(self._replies, 65536)
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            reply = json.loads(line)
        except json.JSONDecodeError:
            raise ForkFailed("the fork server's reply was not JSON") from None
        if not isinstance(reply, dict):
            raise ForkFailed("the fork server's reply was not an object")
        return reply


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _read(path: Path) -> str:
    try:
        return read_output(path)
    except OSError:
        return ""
