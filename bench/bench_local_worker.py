"""The embedded model out of process: the per-token cost of the worker, cancellation, the probe.

Method
------
1. Decode speed: one structured request whose grammar forces a long reply (a JSON array of 80
   numbers, ``--tokens`` output tokens at most, greedy) generated ``--rounds`` times in this process by the
   worker's own generation function (``llama_engine.generate`` on a model loaded here) and the
   same number of times through the worker process (``LocalWorker.request``, every text piece
   sent over the pipe as one JSON line and handed to a callback here), alternating. One warm-up
   of each first (it builds the grammar). A half-second pause precedes each timed generation,
   so the other side's llama.cpp threads have stopped spinning. Both sides run the same prompt
   on a warm KV cache, so the prompt is not re-evaluated and the figure is decoding. Reported:
   median decode tokens/s of each, their ratio (worker / in-process), and the median extra
   wall time per generated token; and, measured apart from decoding's noise, the wall time of a
   request here minus the worker's own timing of the same generation, per token.
2. Cancellation: a long greedy generation through the worker, cancelled when its first text
   piece arrives; the seconds from the cancel to the request's return, and whether the same
   worker process still serves (it should: only a worker that ignores the cancel is killed).
3. The probe: a fresh worker and an empty cache folder, ``local_probe.probe`` cold (worker start,
   model load, a few constrained tokens; the worker's start-to-ready time is shown beside it,
   and the same import and load in this process for comparison), then again (the cached result).

Figures depend on the machine and its load; the model is the embedded default (SmolLM2-135M).

Run: python bench/bench_local_worker.py [--rounds 5] [--tokens 128]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from protoagent.models import installed, llama_engine
from protoagent.models.llama_local import LlamaLocalProvider
from protoagent.models.local_client import LocalWorker
from protoagent.models.local_probe import probe
from protoagent.models.types import Message, ModelRequest

TASK = "List the whole numbers from 1 to 80 as a JSON array."
ITEMS = 80
PAUSE_S = 0.5
"""Between two timed generations, so llama.cpp's spinning threads of one side have gone idle."""


def request(tokens: int) -> ModelRequest:
    """A structured request whose grammar forces a long reply (``ITEMS`` numbers), so decoding dominates."""
    schema = {"type": "array", "items": {"type": "integer"}, "minItems": ITEMS, "maxItems": ITEMS}
    return ModelRequest(
        system="You are a helpful assistant. Reply with JSON only.",
        messages=(Message("user", TASK),),
        action_mode="json",
        output_schema=schema,
        max_output_tokens=tokens,
    )


def in_process(
    model: llama_engine.LoadedModel, provider: LlamaLocalProvider, message: dict[str, object]
) -> tuple[float, int]:
    """Wall seconds and output tokens of one generation in this process."""
    pieces: list[str] = []
    job = llama_engine.GenerateJob(message["chat"], str(message["schema"]), int(str(message["limit"])))  # type: ignore[arg-type]
    started = time.perf_counter()
    done = llama_engine.generate(model, provider.n_ctx, job, pieces.append, lambda: False)
    return time.perf_counter() - started, int(done["usage"]["output_tokens"])


PIPE: list[float] = []
"""Per generation through the worker: wall seconds here minus the worker's own generation time."""


def through_worker(worker: LocalWorker, message: dict[str, object]) -> tuple[float, int]:
    """Wall seconds and output tokens of one generation through the worker process."""
    pieces: list[str] = []
    started = time.perf_counter()
    done = worker.request(message, on_text=pieces.append)
    wall = time.perf_counter() - started
    PIPE.append(wall - float(done["seconds"]))
    return wall, int(done["usage"]["output_tokens"])


def decode_speed(provider: LlamaLocalProvider, rounds: int, tokens: int) -> None:
    message = provider.generate_message(request(tokens))
    started = time.perf_counter()
    model = llama_engine.load_model(provider.path, provider.n_ctx)
    print(f"in-process import and load: {time.perf_counter() - started:.2f} s")
    worker = provider.worker
    in_process(model, provider, message)
    through_worker(worker, message)
    local: list[tuple[float, int]] = []
    remote: list[tuple[float, int]] = []
    for _ in range(rounds):
        time.sleep(PAUSE_S)
        local.append(in_process(model, provider, message))
        time.sleep(PAUSE_S)
        remote.append(through_worker(worker, message))
    local_rate = statistics.median(n / s for s, n in local)
    remote_rate = statistics.median(n / s for s, n in remote)
    extra = statistics.median((r[0] - x[0]) / max(r[1], 1) for x, r in zip(local, remote, strict=True))
    print(f"decode, {rounds} rounds of {local[0][1]} tokens:")
    print(f"  in-process     {local_rate:8.1f} tokens/s")
    print(f"  worker process {remote_rate:8.1f} tokens/s")
    print(f"  ratio worker/in-process {remote_rate / local_rate:.3f}; extra per token {extra * 1e6:+.0f} us")
    pipe = statistics.median(PIPE[-rounds:]) / max(remote[0][1], 1)
    print(f"  outside the worker's own decoding (request, pipe, rendering): {pipe * 1e6:.0f} us per token")


def cancellation(provider: LlamaLocalProvider) -> None:
    worker = provider.worker
    pid = worker.pid
    stop = threading.Event()
    cancelled_at: list[float] = []

    def on_text(_: str) -> None:
        if not stop.is_set():
            cancelled_at.append(time.perf_counter())
            stop.set()

    message = provider.generate_message(request(2048))
    try:
        worker.request(message, on_text=on_text, stop=stop)
        outcome = "returned"
    except Exception as error:  # a killed worker reports itself as stopped
        outcome = f"raised: {error}"
    took = time.perf_counter() - cancelled_at[0] if cancelled_at else float("nan")
    same = worker.pid == pid and pid is not None
    print(f"cancel: {took * 1000:.0f} ms from cancel to return ({outcome}); same worker serves: {same}")


def probe_times(provider: LlamaLocalProvider) -> None:
    with tempfile.TemporaryDirectory() as folder:
        worker = LocalWorker(provider.path, provider.n_ctx)
        started = time.perf_counter()
        cold = probe(worker, Path(folder))
        cold_s = time.perf_counter() - started
        started = time.perf_counter()
        cached = probe(worker, Path(folder))
        cached_s = time.perf_counter() - started
        worker.close()
    rate = f"{cold.tokens_per_s:.1f} tokens/s" if cold.tokens_per_s else "no tokens"
    start = f"{worker.load_seconds:.2f} s" if worker.load_seconds is not None else "?"
    print(f"probe: cold {cold_s:.2f} s (ok={cold.ok}, {rate}; worker start and load {start}); ", end="")
    print(f"cached {cached_s * 1000:.1f} ms (cached={cached.cached})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=400)
    args = parser.parse_args()
    path = installed.embedded_gguf_path(installed.default_embedded())
    provider = LlamaLocalProvider(path, model=path.name, n_ctx=4096)
    print(f"model {path.name}, context window {provider.n_ctx}")
    probe_times(provider)
    decode_speed(provider, args.rounds, args.tokens)
    cancellation(provider)


if __name__ == "__main__":
    main()
