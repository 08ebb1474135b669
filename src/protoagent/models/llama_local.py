"""The embedded local model: a GGUF run by llama.cpp in a worker process, every reply
constrained to one JSON action.

The harness never loads llama.cpp: ``local_client`` starts one worker process per GGUF file
and context size (``local_worker``, which runs ``llama_engine``) and streams each reply's text
back. A native crash there fails the request with one ``ProviderError`` line and the run ends
with its report; the harness and its other sessions go on. Before the first use with a given
build on a given CPU, ``local_probe`` runs a tiny generation there (``prepare``, which a run
awaits before its session is written).
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from protoagent.errors import ConfigError, LimitExceeded, ProviderError
from protoagent.models import installed
from protoagent.models.json_actions import (
    FinalTextStream,
    action_schema,
    json_mode_system,
    parse_action,
    render_history,
    wants_structured_output,
)
from protoagent.models.local_client import LocalWorker, worker_for
from protoagent.models.local_probe import probe_enabled, require_working
from protoagent.models.registry import ModelConfig
from protoagent.models.types import Message, ModelEvent, ModelRequest, ModelTurn, TextDelta, Usage

DEFAULT_MAX_OUTPUT_TOKENS = 1024


def chat_messages(messages: list[Message]) -> list[dict[str, str]]:
    """Messages as the worker takes them."""
    return [{"role": m.role, "content": m.content} for m in messages]


class LlamaLocalProvider:
    """``local`` / ``local:PATH``: a GGUF model run in this process's model worker."""

    name = "local"

    def __init__(self, path: Path, *, model: str, n_ctx: int, max_output_tokens: int | None = None):
        self.path = path
        self.model = model
        self.n_ctx = n_ctx
        self.max_output_tokens = max_output_tokens

    @property
    def worker(self) -> LocalWorker:
        """The worker process that runs this model (shared by every provider of the same model)."""
        return worker_for(self.path, self.n_ctx)

    def context_window(self) -> int | None:
        """The window the worker runs the model with."""
        return self.n_ctx

    async def prepare(self, data_home: Path | None = None) -> None:
        """Before a session is written: probe the model on this build and CPU (``local_probe``)
        and start its worker; ``ConfigError`` naming the cause and the fix when it cannot run
        here. Waits off the event loop, so a stop signal ends it at once (the worker is killed).
        With ``PROTOAGENT_LOCAL_PROBE=off`` nothing happens until the first request."""
        if not probe_enabled():
            return
        stop = threading.Event()

        def ready() -> None:
            require_working(self.worker, stop, data_home)
            try:
                self.worker.request({"op": "count", "text": ""}, stop=stop)
            except ProviderError as error:
                if not stop.is_set():
                    raise ConfigError(f"the embedded model cannot start: {error}") from None

        try:
            await asyncio.to_thread(ready)
        finally:
            stop.set()

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the model's own tokenizer (context admission uses it)."""
        return int(self.worker.request({"op": "count", "text": text})["tokens"])

    def generate_message(self, request: ModelRequest) -> dict[str, Any]:
        """The worker's ``generate`` request for a model request."""
        structured = wants_structured_output(request)
        system = (
            request.system
            if structured
            else json_mode_system(request.system, request.tools, tools_in_prompt=request.tools_in_prompt)
        )
        messages = [Message(role="system", content=system), *render_history(request.messages)]
        schema = request.output_schema if structured else action_schema(request.tools)
        return {
            "op": "generate",
            "chat": chat_messages(messages),
            "schema": json.dumps(schema),
            "limit": request.max_output_tokens or self.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS,
            "temperature": 0.0 if request.temperature is None else request.temperature,
        }

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        message = self.generate_message(request)

        def emit(kind: str, value: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

        def generate() -> None:
            try:
                done = self.worker.request(message, on_text=lambda text: emit("text", text), stop=stop)
                emit("usage", Usage(**done["usage"]))
            except (ProviderError, LimitExceeded) as error:
                emit("error", error)

        worker = asyncio.ensure_future(asyncio.to_thread(generate))
        final = FinalTextStream()
        raw: list[str] = []
        try:
            kind, value = await queue.get()
            while kind == "text":
                raw.append(value)
                piece = final.feed(value)
                if piece:
                    yield TextDelta(piece)
                kind, value = await queue.get()
            if kind == "error":
                raise value
            reply = "".join(raw)
            if wants_structured_output(request):
                # The grammar held the reply to the request's own schema: it is the answer as is.
                yield ModelTurn(text=reply, usage=value)
                return
            turn = parse_action(reply, request.tools)
            if not turn.tool_calls and reply.lstrip().startswith("{") and turn.text == reply.strip():
                # The grammar only lets a whole action through, so an unparsed reply was cut off
                # (usually at the token limit). It is no answer: the loop asks for a valid action.
                yield ModelTurn(text=reply[:2000], usage=value, stop_reason="invalid_action")
                return
            rest = final.rest(turn)
            if rest:
                yield TextDelta(rest)
            yield ModelTurn(text=turn.text, tool_calls=turn.tool_calls, usage=value, stop_reason=turn.stop_reason)
        finally:
            stop.set()
            await worker


def resolve_gguf(rest: str, config: ModelConfig) -> tuple[Path, str]:
    """The GGUF file and model name a ``local[:ALIAS|:PATH]`` spec names."""
    if not rest:
        model = installed.default_embedded()
        return installed.embedded_gguf_path(model), model.alias
    embedded = installed.find_embedded(rest)
    if embedded is not None:
        return installed.embedded_gguf_path(embedded), embedded.alias
    path = Path(rest).expanduser()
    if not path.is_absolute() and config.base_dir is not None:
        path = config.base_dir / path
    if not path.is_file():
        aliases = ", ".join(model.alias for model in installed.EMBEDDED_MODELS)
        raise ConfigError(f"no GGUF file at {str(path)!r}; use 'local', 'local:PATH.gguf' or one of: {aliases}")
    return path, path.name


def from_spec(rest: str, config: ModelConfig) -> LlamaLocalProvider:
    """``local`` (the embedded default), ``local:<alias>`` or ``local:<path to a .gguf>``. Nothing
    starts yet: ``prepare`` probes the model and starts its worker."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError("the local model needs llama-cpp-python; install protoagent[local]")
    path, name = resolve_gguf(rest, config)
    n_ctx = config.context_window
    if n_ctx is None:
        trained = installed.read_gguf_context_length(path)
        n_ctx = min(installed.FALLBACK_CONTEXT_WINDOW, trained or installed.FALLBACK_CONTEXT_WINDOW)
    return LlamaLocalProvider(path, model=name, n_ctx=n_ctx, max_output_tokens=config.max_output_tokens)
