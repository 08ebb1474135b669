"""Running prepared commands: one process group per command, a journal per process, a registry
that tracks every live process of a session and stops them all on shutdown.

Each process has a supervisor thread (an idle one is reused) that copies its output into the
journal, sees its exit at once (a process descriptor, not a timed poll), enforces its timeout
(SIGTERM to the group, SIGKILL after a grace period) and, once the leader has exited, stops
whatever is left of its group: a command is finished when its leader exits, and
nothing it started outlives it (a descendant that leaves the group with ``setsid`` escapes
this; inside the sandbox's PID namespace it dies with the command, and without one the CLI's
subreaper stops it). The thread makes timeouts hold even when no event loop is waiting, as
for a shell command that went on running after its call returned. Async waiters are woken by
the supervisor on their own event loop when the process finishes, so a process can be awaited
from any event loop.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from protoagent.errors import RunError
from protoagent.processes.artifact_cap import ArtifactCaps, CappedOutput
from protoagent.processes.command import PreparedCommand
from protoagent.processes.groups import group_alive, signal_group
from protoagent.processes.journal import OutputJournal
from protoagent.processes.pump import FALLBACK_POLL_S, OutputPump, exit_descriptor
from protoagent.processes.supervisors import SUPERVISORS

DEFAULT_GRACE_S = 2.0
"""Seconds between SIGTERM and SIGKILL when a process group is stopped."""
DRAIN_S = 1.0
"""After the group is gone, how long output is still copied from a writer that left the group."""


@dataclass(frozen=True, slots=True)
class ProcessState:
    """A consistent snapshot of how a process stands."""

    running: bool
    exit_code: int | None
    """The leader's exit status once finished (negative: the signal that ended it)."""
    timed_out: bool
    terminated: bool
    duration_s: float


class ManagedProcess:
    """One started command: its group, its journal and how it ended."""

    def __init__(
        self, process_id: str, command: PreparedCommand, label: str, journal: OutputJournal, grace_s: float
    ) -> None:
        self.id = process_id
        self.command = command
        self.label = label
        """What the caller asked to run (the argv, or a shell command line)."""
        self.journal = journal
        self.timed_out = False
        self.terminated = False
        self._grace_s = grace_s
        self._done = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        """Async waiters, each woken on its own event loop when the process has finished."""
        self._waiters_lock = threading.Lock()
        self._started = time.monotonic()
        self._ended: float | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._pump: OutputPump | None = None

    def start(self, output_fd: int, pump: OutputPump) -> None:
        """Spawn the command in a new session writing to ``output_fd`` (the write end of the pipe
        ``pump`` reads); supervise it. The caller closes ``output_fd`` afterwards."""
        self._popen = subprocess.Popen(
            self.command.spawn_argv(),
            cwd=self.command.cwd,
            env=self.command.environment,
            stdin=subprocess.DEVNULL,
            stdout=output_fd,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            close_fds=True,
        )
        self._started = time.monotonic()
        self._pump = pump
        SUPERVISORS.run(self._supervise)

    @property
    def pid(self) -> int:
        assert self._popen is not None, "process was not started"
        return self._popen.pid

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def state(self) -> ProcessState:
        """Snapshot the process; once it reads finished, every field is final."""
        done = self._done.is_set()
        code = self._popen.returncode if done and self._popen is not None else None
        end = self._ended if done and self._ended is not None else time.monotonic()
        return ProcessState(
            running=not done,
            exit_code=code,
            timed_out=self.timed_out,
            terminated=self.terminated,
            duration_s=round(end - self._started, 3),
        )

    async def wait(self, timeout_s: float | None) -> bool:
        """Wait up to ``timeout_s`` (None: no limit) for the process to finish; true if it did.

        The supervisor thread wakes the waiter's own event loop when the process has finished,
        so a wait costs no polling and ends as soon as the process does."""
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        with self._waiters_lock:
            if self._done.is_set():
                return True
            self._waiters.append((loop, woken))
        try:
            await asyncio.wait_for(asyncio.shield(woken), timeout_s)
        except TimeoutError:
            return not self.running
        finally:
            with self._waiters_lock:
                if (loop, woken) in self._waiters:
                    self._waiters.remove((loop, woken))
        return True

    def wait_sync(self, timeout_s: float) -> bool:
        """Block up to ``timeout_s`` for the process to finish (for callers outside a loop)."""
        return self._done.wait(timeout_s)

    async def terminate(self) -> None:
        """Stop the whole group: SIGTERM, then SIGKILL after the grace period."""
        if not self.running:
            return
        self.terminated = True
        signal_group(self.pid, signal.SIGTERM)
        if not await self.wait(self._grace_s):
            signal_group(self.pid, signal.SIGKILL)
            await self.wait(None)

    def kill(self) -> None:
        """Stop the whole group at once (cancellation): SIGKILL, then wait for the supervisor.
        Output nobody observed is kept in the artifact file."""
        if self.running:
            self.terminated = True
            signal_group(self.pid, signal.SIGKILL)
            self.wait_sync(self._grace_s * 2)
        self.keep_unobserved_output()

    def keep_unobserved_output(self) -> None:
        """Write the artifact file of a finished process whose output was not all observed."""
        if not self.running and self.journal.size > self.journal.observed:
            self.journal.materialize()

    def _supervise(self) -> None:
        assert self._popen is not None and self._pump is not None
        exit_fd = exit_descriptor(self.pid)
        try:
            try:
                if not self._await_leader(exit_fd, self.command.timeout_s):
                    self.timed_out = True
                    self._stop_leader(exit_fd)
                self._clear_group()
            finally:
                self._ended = time.monotonic()
                self._pump.drain(DRAIN_S)
        finally:
            # Waiters must never hang, even if stopping the group failed unexpectedly.
            if exit_fd is not None:
                os.close(exit_fd)
            self._pump.close()
            self._finish()

    def _await_leader(self, exit_fd: int | None, timeout_s: float | None) -> bool:
        """Copy output until the leader has exited (true, reaped) or ``timeout_s`` passed."""
        assert self._popen is not None and self._pump is not None
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        while self._popen.poll() is None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            if exit_fd is not None:
                self._pump.copy_until(exit_fd, left)
            else:
                self._pump.copy_until(None, FALLBACK_POLL_S if left is None else min(left, FALLBACK_POLL_S))
        return True

    def _finish(self) -> None:
        """Mark the process finished and wake every async waiter on its own loop."""
        with self._waiters_lock:
            self._done.set()
            waiters, self._waiters = self._waiters, []
        for loop, woken in waiters:
            try:
                loop.call_soon_threadsafe(_wake, woken)
            except RuntimeError:
                continue  # that waiter's loop is closed; nobody is left waiting there

    def _stop_leader(self, exit_fd: int | None) -> None:
        signal_group(self.pid, signal.SIGTERM)
        if not self._await_leader(exit_fd, self._grace_s):
            signal_group(self.pid, signal.SIGKILL)
            self._await_leader(exit_fd, None)

    def _clear_group(self) -> None:
        if not group_alive(self.pid):
            return
        signal_group(self.pid, signal.SIGTERM)
        if not self._await_group_gone(self._grace_s):
            signal_group(self.pid, signal.SIGKILL)
            self._await_group_gone(self._grace_s)

    def _await_group_gone(self, timeout_s: float) -> bool:
        """Copy output until the group has no live member (true) or ``timeout_s`` passed."""
        assert self._pump is not None
        deadline = time.monotonic() + timeout_s
        delay = 0.001
        while group_alive(self.pid):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._pump.copy_until(None, min(delay, left))
            delay = min(delay * 2, 0.02)
        return True


class ProcessRegistry:
    """Every process a session started, by opaque id (``p_<8 hex>``).

    The session wiring creates one per session and puts it into
    ``RunServices.processes``; the application calls ``shutdown`` on exit.
    Commands run to completion by ``execute_command`` are tracked while they run and then
    forgotten; shell processes stay listed for the ``process`` tool.
    """

    def __init__(self, *, grace_s: float = DEFAULT_GRACE_S) -> None:
        self.grace_s = grace_s
        self.deferred = False
        """True once a shell call returned a process id (the ``process`` tool is then offered)."""
        self._processes: dict[str, ManagedProcess] = {}
        self._listed: set[str] = set()
        self._scratch: Path | None = None
        self._closed = False
        self._lock = threading.Lock()

    def artifacts_dir(self, session_dir: Path | None) -> Path:
        """``session_dir`` or, without one, a temporary folder this registry keeps for the session."""
        if session_dir is not None:
            return session_dir
        with self._lock:
            if self._scratch is None:
                self._scratch = Path(tempfile.mkdtemp(prefix="protoagent-session-"))
            return self._scratch

    def start(self, command: PreparedCommand, *, artifacts_dir: Path, label: str, listed: bool) -> ManagedProcess:
        """Spawn ``command`` journalling its output; the artifact, ``artifacts_dir/processes/<id>.log``,
        is written once the output passes the command's output limit.

        Raises ``OSError`` when the operating system cannot start it.
        """
        if self._closed:
            raise RunError("the process registry was shut down; no command can start")
        for folder in (session_home(artifacts_dir), session_tmp(artifacts_dir)):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder = artifacts_dir / "processes"
        process_id = self._claim_id(folder)
        cap = ArtifactCaps.from_env().for_artifact_in(folder)
        output = CappedOutput(folder / f"{process_id}.log", cap, inline=command.output_limit)
        process = ManagedProcess(process_id, command, label, OutputJournal(output.path, output), self.grace_s)
        read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
        pump = OutputPump(read_fd, output)
        try:
            process.start(write_fd, pump)
        except OSError:
            pump.close()
            raise
        finally:
            os.close(write_fd)
        with self._lock:
            closed = self._closed
            if not closed:
                self._processes[process_id] = process
                if listed:
                    self._listed.add(process_id)
        if closed:
            process.kill()
            raise RunError("the process registry was shut down while the command started; it was stopped")
        return process

    def get(self, process_id: str) -> ManagedProcess | None:
        with self._lock:
            return self._processes.get(process_id) if process_id in self._listed else None

    def listed(self) -> list[ManagedProcess]:
        with self._lock:
            return [self._processes[pid] for pid in self._processes if pid in self._listed]

    def live(self) -> list[ManagedProcess]:
        with self._lock:
            return [process for process in self._processes.values() if process.running]

    def forget(self, process_id: str) -> None:
        with self._lock:
            self._processes.pop(process_id, None)
            self._listed.discard(process_id)

    def shutdown(self) -> None:
        """Stop every tracked process group (SIGTERM, grace, SIGKILL); refuse new starts."""
        with self._lock:
            self._closed = True
        live = self.live()
        for process in live:
            process.terminated = True
            signal_group(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + self.grace_s
        for process in live:
            process.wait_sync(max(0.0, deadline - time.monotonic()))
        for process in live:
            if process.running:
                signal_group(process.pid, signal.SIGKILL)
        for process in live:
            process.wait_sync(self.grace_s * 2)
        with self._lock:
            tracked = list(self._processes.values())
        for process in tracked:
            process.keep_unobserved_output()

    def _claim_id(self, folder: Path) -> str:
        """A process id no live process and no artifact in ``folder`` has."""
        while True:
            process_id = f"p_{secrets.token_hex(4)}"
            with self._lock:
                if process_id in self._processes:
                    continue
            if not os.path.lexists(folder / f"{process_id}.log"):
                return process_id


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)


def session_home(artifacts_dir: Path) -> Path:
    """The folder children of a session see as ``HOME``."""
    return artifacts_dir / "home"


def session_tmp(artifacts_dir: Path) -> Path:
    """The session's temp folder: a sandboxed command sees it as ``/tmp``."""
    return artifacts_dir / "tmp"
