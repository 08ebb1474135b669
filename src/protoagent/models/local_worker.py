"""The embedded model's worker process: ``python -m protoagent.models.local_worker GGUF N_CTX PARENT``.

The harness never loads llama.cpp itself: a native crash (an illegal instruction on a CPU the
build does not suit, a segfault) would end the harness and every session it serves. This
process loads the model once and answers requests over its standard streams, one JSON object
per line (``local_client`` is the other end):

- it first writes ``{"ready": {"pid", "load_seconds"}}`` (or ``{"error": ...}`` and exits 1);
- a request ``{"id", "op", ...}`` gets zero or more ``{"id", "text"}`` pieces (batched every
  ``TEXT_BATCH_S``), then one
  ``{"id", "done": {...}}`` or ``{"id", "error": {"type", "message", "limit"}}``;
- ``{"op": "cancel", "id"}`` stops that request at the next token or prompt chunk.

Operations: ``count`` (tokens of a text), ``generate`` (one reply; ``llama_engine.generate``),
``variants`` (open a guided-repair line source; answers a ``handle``) and ``next`` (its next
line, ``null`` at the end). The process dies with its parent: end of input, and on Linux
``PR_SET_PDEATHSIG``. SIGINT is ignored: a person's Ctrl-C reaches the harness, which cancels.
"""

from __future__ import annotations

import ctypes
import json
import os
import queue
import signal
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from protoagent.errors import LimitExceeded, ProviderError

PR_SET_PDEATHSIG = 1
TEXT_BATCH_S = 0.02
"""Text pieces of one request are sent together at most this often (and before its answer)."""
MAX_OPEN_VARIANTS = 8
"""Line sources kept open at once; the oldest is dropped beyond this (a dropped one answers ``null``)."""


class Replies:
    """The protocol's output: one JSON object per line on the original standard output."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8") + b"\n"
        with self._lock:
            self._stream.write(data)
            self._stream.flush()


class TextBatch:
    """A request's text pieces, sent at most every ``TEXT_BATCH_S``: one message per token would
    wake the harness per token, which a busy machine pays for in decoding speed."""

    def __init__(self, replies: Replies, rid: int) -> None:
        self._replies = replies
        self._rid = rid
        self._pieces: list[str] = []
        self._sent = time.monotonic()

    def add(self, text: str) -> None:
        self._pieces.append(text)
        if time.monotonic() - self._sent >= TEXT_BATCH_S:
            self.flush()

    def flush(self) -> None:
        if self._pieces:
            self._replies.send({"id": self._rid, "text": "".join(self._pieces)})
            self._pieces.clear()
        self._sent = time.monotonic()


class Worker:
    """Requests in order, each with its own cancellation flag."""

    def __init__(self, path: Path, n_ctx: int, replies: Replies) -> None:
        from protoagent.models.llama_engine import load_model

        self.n_ctx = n_ctx
        self.replies = replies
        self.model = load_model(path, n_ctx)
        self.cancelled: set[int] = set()
        self.current = 0
        self.sources: OrderedDict[int, Iterator[str]] = OrderedDict()

    def is_cancelled(self) -> bool:
        return self.current in self.cancelled

    def serve(self, requests: queue.Queue[dict[str, Any]]) -> None:
        while True:
            message = requests.get()
            self.current = int(message.get("id", 0))
            pieces = TextBatch(self.replies, self.current)
            try:
                done = self.handle(message, pieces.add)
                pieces.flush()
                self.replies.send({"id": self.current, "done": done})
            except LimitExceeded as error:
                pieces.flush()
                self._error("LimitExceeded", str(error), error.limit)
            except ProviderError as error:
                pieces.flush()
                self._error("ProviderError", str(error))
            except Exception as error:  # llama.cpp failures arrive as plain exceptions
                pieces.flush()
                self._error("ProviderError", f"local model failed: {error}")
            finally:
                self.cancelled.discard(self.current)

    def _error(self, kind: str, message: str, limit: str | None = None) -> None:
        self.replies.send({"id": self.current, "error": {"type": kind, "message": message, "limit": limit}})

    def handle(self, message: dict[str, Any], emit: Callable[[str], None]) -> dict[str, Any]:
        from protoagent.models import llama_engine

        op = message.get("op")
        if op == "count":
            return {"tokens": llama_engine.count_tokens(self.model, str(message["text"]))}
        if op == "generate":
            job = llama_engine.GenerateJob(
                chat=message["chat"],
                schema=str(message["schema"]),
                limit=int(message["limit"]),
                temperature=float(message.get("temperature") or 0.0),
                close=bool(message.get("close", True)),
            )
            return llama_engine.generate(self.model, self.n_ctx, job, emit, self.is_cancelled)
        if op == "variants":
            job_v = llama_engine.VariantsJob(
                chat=message["chat"],
                old=str(message["old"]),
                per_position=int(message.get("per_position", 3)),
                samples=int(message.get("samples", 2)),
                seed=int(message.get("seed", 0)),
            )
            self.sources[self.current] = llama_engine.line_variants(self.model, job_v, self.is_cancelled)
            while len(self.sources) > MAX_OPEN_VARIANTS:
                self.sources.popitem(last=False)
            return {"handle": self.current}
        if op == "next":
            source = self.sources.get(int(message["handle"]))
            line = next(source, None) if source is not None else None
            if line is None:
                self.sources.pop(int(message["handle"]), None)
            return {"line": line}
        raise ProviderError(f"the local model worker has no operation {op!r}", provider="local")


def read_requests(stream: BinaryIO, requests: queue.Queue[dict[str, Any]], cancelled: set[int]) -> None:
    """Requests into the queue, cancellations at once; the parent's end of input ends the process."""
    for line in stream:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if message.get("op") == "cancel":
            cancelled.add(int(message.get("id", 0)))
        else:
            requests.put(message)
    os._exit(0)


def die_with_parent(parent: int) -> None:
    """Ask Linux to kill this process when the thread that started it ends; leave if it is gone."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:
        os._exit(0)


def main(argv: list[str]) -> int:
    path, n_ctx, parent = Path(argv[0]), int(argv[1]), int(argv[2])
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # The protocol keeps the original stdout; anything native code prints goes to stderr instead.
    replies = Replies(os.fdopen(os.dup(1), "wb"))
    os.dup2(2, 1)
    started = time.monotonic()
    try:
        worker = Worker(path, n_ctx, replies)
    except Exception as error:  # a file llama.cpp cannot load arrives as a plain exception
        replies.send({"error": {"type": "ProviderError", "message": f"cannot load {path.name}: {error}"}})
        return 1
    replies.send({"ready": {"pid": os.getpid(), "load_seconds": time.monotonic() - started}})
    requests: queue.Queue[dict[str, Any]] = queue.Queue()
    reader = threading.Thread(target=read_requests, args=(sys.stdin.buffer, requests, worker.cancelled), daemon=True)
    reader.start()
    worker.serve(requests)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
