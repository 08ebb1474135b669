"""The harness's end of the embedded model's worker process (``local_worker``).

One worker per harness process and (GGUF file, context size), started on first use and kept for
the process's life, so consecutive requests share its KV cache. Requests are serialized (a model
answers one at a time). A stopped request is cancelled by message; a worker that does not answer
within ``CANCEL_GRACE_S`` is killed and the next request starts a fresh one. A worker that dies
(any signal, or an exit) fails the request in flight with one ``ProviderError`` line naming the
signal, the likely cause and the fix; the harness and its other sessions go on.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

from protoagent.errors import LimitExceeded, ProviderError
from protoagent.models.model_slots import ModelSlots
from protoagent.processes.reaper import spare, unspare

PROVIDER = "local"
CANCEL_GRACE_S = 0.5
"""Seconds a cancelled request may take to end before its worker is killed."""
POLL_S = 0.05
"""How often a waiting request looks at its stop flag."""
FIX = (
    "reinstall llama-cpp-python with the portable build (PROTOAGENT_LLAMA_BUILD=portable scripts/bootstrap) "
    "or point --model at a model server (openai-compatible:URL#MODEL)"
)
CAUSES = {
    signal.SIGILL: "the llama-cpp-python build uses instructions this CPU/VM does not allow",
    signal.SIGSEGV: "llama.cpp crashed on a bad memory access",
    signal.SIGBUS: "llama.cpp crashed on a bad memory access",
    signal.SIGFPE: "llama.cpp crashed on an arithmetic fault",
    signal.SIGABRT: "llama.cpp aborted",
    signal.SIGKILL: "it was killed (out of memory, or by another process)",
    signal.SIGTERM: "another process ended it",
}
# PR_SET_PDEATHSIG fires when the *thread* that started a process ends, so workers are started
# from one thread that lives as long as the process.
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="protoagent-model-spawner")


def crash_message(returncode: int, detail: str = "") -> str:
    """One line for a worker that ended: the signal or status, the cause and the fix."""
    if returncode < 0:
        signum = signal.Signals(-returncode)
        cause = CAUSES.get(signum, "a native crash in llama.cpp")
        fix = "the next request starts a fresh one" if signum in (signal.SIGKILL, signal.SIGTERM) else FIX
        return f"the local model process died of {signum.name} ({signal.strsignal(signum)}): {cause}; {fix}"
    said = f": {detail}" if detail else ""
    return f"the local model process exited with status {returncode}{said}; {FIX}"


class Channel:
    """JSON lines to and from one worker process, with timed reads."""

    def __init__(self, process: subprocess.Popen[bytes], stderr: IO[bytes]) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.process = process
        self.stderr = stderr
        """Where the worker's standard error goes (a temporary file), for the last line of a failure."""
        self._in: IO[bytes] = process.stdin
        self._out = process.stdout.fileno()
        self._buffer = b""
        self._closed = False

    def send(self, message: dict[str, Any]) -> bool:
        """Write one message; ``False`` when the worker is gone."""
        try:
            self._in.write(json.dumps(message).encode("utf-8") + b"\n")
            self._in.flush()
        except (BrokenPipeError, ValueError, OSError):
            return False
        return True

    def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next message, ``None`` when none came within ``timeout``; ``EOFError`` when the worker is gone."""
        while b"\n" not in self._buffer:
            if self._closed:
                raise EOFError
            ready, _, _ = select.select([self._out], [], [], timeout)
            if not ready:
                return None
            data = os.read(self._out, 65536)
            if not data:
                self._closed = True
                continue
            self._buffer += data
        line, self._buffer = self._buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message


class LocalWorker:
    """The worker for one GGUF file and context size, started on the first request."""

    def __init__(self, path: Path, n_ctx: int) -> None:
        self.path = path
        self.n_ctx = n_ctx
        self.load_seconds: float | None = None
        """How long the current worker took to start and load the model."""
        self._lock = threading.Lock()
        self._channel: Channel | None = None
        self._ids = itertools.count(1)

    @property
    def pid(self) -> int | None:
        """The running worker's process id, if one runs."""
        channel = self._channel
        return channel.process.pid if channel is not None and channel.process.poll() is None else None

    def request(
        self,
        message: dict[str, Any],
        *,
        on_text: Callable[[str], None] | None = None,
        stop: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Send one request and wait for its answer, text pieces to ``on_text`` as they come.

        Raises ``ProviderError`` when the worker dies or ``stop`` ended the request, and the
        worker's own ``ProviderError`` or ``LimitExceeded``."""
        with self._lock:
            channel = self._running(stop)
            rid = next(self._ids)
            if not channel.send({"id": rid, **message}):
                raise self._ended(channel)
            deadline: float | None = None
            while True:
                if stop is not None and stop.is_set() and deadline is None:
                    channel.send({"op": "cancel", "id": rid})
                    deadline = time.monotonic() + CANCEL_GRACE_S
                if deadline is not None and time.monotonic() > deadline:
                    self._kill(channel)
                    raise ProviderError("the local model was stopped", provider=PROVIDER)
                reply = self._receive(channel)
                if reply is None or reply.get("id") != rid:
                    continue
                if "text" in reply:
                    if on_text is not None:
                        on_text(str(reply["text"]))
                    continue
                if "error" in reply:
                    raise _worker_error(reply["error"])
                done: dict[str, Any] = reply["done"]
                return done

    def close(self, wait_s: float | None = None) -> None:
        """Stop the worker (the next request starts a fresh one). With ``wait_s``, a request
        still holding the worker after that long is not waited for: the worker is killed under it."""
        held = self._lock.acquire(timeout=-1 if wait_s is None else wait_s)
        try:
            channel = self._channel
            if channel is not None:
                self._kill(channel)
        finally:
            if held:
                self._lock.release()

    def _receive(self, channel: Channel) -> dict[str, Any] | None:
        try:
            return channel.receive(POLL_S)
        except EOFError:
            raise self._ended(channel) from None
        except ValueError:
            self._kill(channel)
            raise ProviderError("the local model process wrote something unreadable", provider=PROVIDER) from None

    def _running(self, stop: threading.Event | None) -> Channel:
        """The live worker's channel, starting a worker (and waiting until it loaded) if none runs."""
        channel = self._channel
        if channel is not None:
            if channel.process.poll() is None:
                return channel
            self._kill(channel)  # it ended between requests: reap it and start afresh
        stderr = tempfile.TemporaryFile()
        argv = [
            sys.executable,
            "-m",
            "protoagent.models.local_worker",
            str(self.path),
            str(self.n_ctx),
            str(os.getpid()),
        ]
        try:
            process = _SPAWNER.submit(_start, argv, stderr).result()
        except (OSError, RuntimeError) as error:  # no interpreter to run, or the process is exiting
            stderr.close()
            raise ProviderError(f"cannot start the local model process: {error}", provider=PROVIDER) from None
        spare(process.pid)
        channel = self._channel = Channel(process, stderr)
        started = time.monotonic()
        while True:
            if stop is not None and stop.is_set():
                self._kill(channel)
                raise ProviderError("the local model was stopped while it loaded", provider=PROVIDER)
            reply = self._receive(channel)
            if reply is None:
                continue
            if "error" in reply:
                self._kill(channel)
                raise _worker_error(reply["error"])
            self.load_seconds = time.monotonic() - started
            return channel

    def _ended(self, channel: Channel) -> ProviderError:
        """The error for a worker that died: waits for its status and forgets it."""
        try:
            returncode = channel.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self._kill(channel)
            returncode = -signal.SIGKILL
        detail = _last_line(channel.stderr)
        self._kill(channel)
        return ProviderError(crash_message(returncode, detail), provider=PROVIDER)

    def _kill(self, channel: Channel) -> None:
        process = channel.process
        if process.poll() is None:
            process.kill()
        process.wait()
        unspare(process.pid)
        for stream in (process.stdin, process.stdout, channel.stderr):
            if stream is not None:
                stream.close()
        if self._channel is channel:
            self._channel = None


def _last_line(stream: IO[bytes]) -> str:
    """The last non-empty line of what the worker wrote to its standard error."""
    stream.seek(0, os.SEEK_END)
    stream.seek(max(0, stream.tell() - 4096))
    lines = [line.strip() for line in stream.read().decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _start(argv: list[str], stderr: IO[bytes]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)


def _worker_error(error: dict[str, Any]) -> ProviderError | LimitExceeded:
    message = str(error.get("message", "the local model failed"))
    if error.get("type") == "LimitExceeded":
        return LimitExceeded(message, limit=str(error.get("limit") or "context_window"))
    return ProviderError(message, provider=PROVIDER)


_WORKERS: ModelSlots[LocalWorker] = ModelSlots(LocalWorker, lambda worker: worker.close(wait_s=1.0))
"""Workers, stopped at exit instead of leaving each to notice its parent's end."""


def worker_for(path: Path, n_ctx: int) -> LocalWorker:
    """This process's worker for a GGUF file and context size (not started until asked)."""
    return _WORKERS.get(path, n_ctx)
