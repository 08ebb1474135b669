"""The embedded local model: llama.cpp in-process, every reply constrained to one JSON action.

The model loads once per process (cached by path and context size) and generation runs in a
worker thread whose tokens reach the event loop through a queue. Consecutive requests share
one ``Llama`` instance, so a prompt that extends the previous one re-uses its KV cache.
Greedy requests (temperature 0, the default) decode in ``llama_sampling``, which checks the
grammar against the greedy choice only; sampled ones go through ``create_completion``.
"""

from __future__ import annotations

import asyncio
import atexit
import importlib.util
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protoagent.errors import ConfigError, LimitExceeded, ProviderError
from protoagent.models import catalog
from protoagent.models.json_actions import (
    FinalTextStream,
    action_schema,
    json_mode_system,
    parse_action,
    render_history,
    wants_structured_output,
)
from protoagent.models.registry import ModelConfig
from protoagent.models.types import Message, ModelEvent, ModelRequest, ModelTurn, TextDelta, Usage

DEFAULT_MAX_OUTPUT_TOKENS = 1024
Emit = Callable[[str, Any], None]


@dataclass(slots=True)
class LoadedModel:
    """One ``Llama`` instance and what requests need to know about it."""

    llama: Any
    template: str | None
    """The GGUF's own chat template, if it ships one."""
    architecture: str
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Held for a whole generation: a ``Llama`` serves one request at a time."""
    grammars: dict[str, Any] = field(default_factory=dict)


_LOADED: dict[tuple[str, int], LoadedModel] = {}
_LOADED_LOCK = threading.Lock()


def load_model(path: Path, n_ctx: int) -> LoadedModel:
    """The process-wide model for this file and context size, loading it on first use."""
    key = (str(path), n_ctx)
    with _LOADED_LOCK:
        loaded = _LOADED.get(key)
        if loaded is None:
            loaded = _load(path, n_ctx)
            if not _LOADED:
                atexit.register(_close_all)
            _LOADED[key] = loaded
        return loaded


def _close_all() -> None:
    """Free loaded models while the interpreter is whole (llama.cpp's own finalizer fails at teardown)."""
    with _LOADED_LOCK:
        for loaded in _LOADED.values():
            loaded.llama.close()
        _LOADED.clear()


def _load(path: Path, n_ctx: int) -> LoadedModel:
    import llama_cpp

    # swa_full keeps the whole window for sliding-window models (Gemma 3), without which
    # llama.cpp cannot truncate the cache to a shared prefix and re-evaluates every prompt.
    llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, swa_full=True, verbose=False)
    metadata: dict[str, str] = dict(llama.metadata)
    return LoadedModel(
        llama=llama,
        template=metadata.get("tokenizer.chat_template"),
        architecture=metadata.get("general.architecture", ""),
    )


@dataclass(frozen=True, slots=True)
class Prompt:
    """A rendered prompt: its tokens and the strings that end a reply."""

    tokens: list[int]
    stop: list[str]


def render_prompt(model: LoadedModel, messages: Sequence[Message]) -> Prompt:
    """Tokens for the conversation, using the model's chat template or a plain turn format."""
    llama = model.llama
    chat = [{"role": m.role, "content": m.content} for m in messages]
    if model.template:
        eos = _token_text(llama, llama.token_eos())
        text = _apply_template(model.template, chat, eos, _token_text(llama, llama.token_bos()))
        if text is not None:
            tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)
            return Prompt(tokens=list(tokens), stop=[eos] if eos else [])
    text, stop = manual_prompt(chat, model.architecture)
    return Prompt(tokens=list(llama.tokenize(text.encode("utf-8"), add_bos=True, special=True)), stop=stop)


def _token_text(llama: Any, token: int) -> str:
    return "" if token < 0 else bytes(llama.detokenize([token], special=True)).decode("utf-8", "replace")


def _apply_template(template: str, chat: list[dict[str, str]], eos: str, bos: str) -> str | None:
    """The chat rendered by the GGUF's template; a template that rejects a system turn gets it
    folded into the first user turn; one that still fails yields ``None`` (manual prompt)."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
    for attempt in (chat, fold_system(chat)):
        try:
            return str(formatter(messages=list[Any](attempt)).prompt)
        except Exception:  # templates raise whatever they like (``raise_exception``, TypeError ...)
            continue
    return None


def fold_system(chat: Sequence[dict[str, str]]) -> list[dict[str, str]]:
    """A leading system turn merged into the first user turn (for templates without a system role)."""
    if len(chat) < 2 or chat[0]["role"] != "system" or chat[1]["role"] != "user":
        return list(chat)
    merged = {"role": "user", "content": f"{chat[0]['content']}\n\n{chat[1]['content']}"}
    return [merged, *chat[2:]]


def manual_prompt(chat: Sequence[dict[str, str]], architecture: str) -> tuple[str, list[str]]:
    """A prompt for GGUF files without a chat template (base models such as Gemma 3 270M)."""
    if architecture.startswith("gemma"):
        parts = []
        for message in fold_system(chat):
            role = "model" if message["role"] == "assistant" else "user"
            parts.append(f"<start_of_turn>{role}\n{message['content']}<end_of_turn>\n")
        return "".join(parts) + "<start_of_turn>model\n", ["<end_of_turn>"]
    parts = [f"{message['role'].capitalize()}: {message['content']}\n\n" for message in chat]
    return "".join(parts) + "Assistant: ", ["\nUser:", "\nSystem:"]


def cached_prefix(llama: Any, tokens: Sequence[int]) -> int:
    """How many leading prompt tokens are already in the KV cache from the previous call."""
    previous = llama.input_ids[: llama.n_tokens].tolist()
    count = 0
    for old, new in zip(previous, tokens, strict=False):
        if old != new:
            break
        count += 1
    # llama.cpp evaluates at least the last prompt token again to get fresh logits.
    return min(count, max(len(tokens) - 1, 0))


CLOSE_RESERVE = 32
"""Output tokens kept for closing an action: a reply still inside a JSON string then is steered to
its end by the grammar's shortest path, instead of being cut off (see ``greedy_generate``)."""


class LlamaLocalProvider:
    """``local`` / ``local:PATH``: a GGUF model run in this process."""

    name = "local"

    def __init__(self, path: Path, *, model: str, n_ctx: int, max_output_tokens: int | None = None):
        self.path = path
        self.model = model
        self.n_ctx = n_ctx
        self.max_output_tokens = max_output_tokens

    def context_window(self) -> int | None:
        """The window this process runs the model with."""
        return self.n_ctx

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the model's own tokenizer (context admission uses it)."""
        loaded = load_model(self.path, self.n_ctx)
        with loaded.lock:
            return len(loaded.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        loop = asyncio.get_running_loop()
        stop = threading.Event()

        def emit(kind: str, value: Any) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, value))

        worker = asyncio.ensure_future(asyncio.to_thread(self._generate, request, emit, stop))
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

    def _generate(self, request: ModelRequest, emit: Emit, stop: threading.Event) -> None:
        try:
            loaded = load_model(self.path, self.n_ctx)
            with loaded.lock:
                usage = self._run(loaded, request, emit, stop)
            emit("usage", usage)
        except (ProviderError, LimitExceeded) as error:
            emit("error", error)
        except Exception as error:  # llama.cpp failures arrive as plain exceptions
            emit("error", ProviderError(f"local model failed: {error}", provider=self.name))

    def _run(self, loaded: LoadedModel, request: ModelRequest, emit: Emit, stop: threading.Event) -> Usage:
        llama = loaded.llama
        messages = [
            Message(
                role="system",
                content=request.system
                if wants_structured_output(request)
                else json_mode_system(request.system, request.tools, tools_in_prompt=request.tools_in_prompt),
            )
        ]
        messages.extend(render_history(request.messages))
        prompt = render_prompt(loaded, messages)
        room = self.n_ctx - len(prompt.tokens)
        if room <= 0:
            raise LimitExceeded(
                f"prompt has {len(prompt.tokens)} tokens but the context window is {self.n_ctx}",
                limit="context_window",
            )
        limit = request.max_output_tokens or self.max_output_tokens or DEFAULT_MAX_OUTPUT_TOKENS
        temperature = 0.0 if request.temperature is None else request.temperature
        max_tokens = min(limit, room)
        cached = cached_prefix(llama, prompt.tokens)
        if temperature == 0.0:
            reply, cached = self._greedy(loaded, request, prompt, max_tokens, cached, emit, stop)
        else:
            reply = self._sample(loaded, request, prompt, max_tokens, temperature, emit, stop)
        output = llama.tokenize(reply.encode("utf-8"), add_bos=False, special=True)
        return Usage(input_tokens=len(prompt.tokens), output_tokens=len(output), cached_input_tokens=cached)

    def _greedy(
        self,
        loaded: LoadedModel,
        request: ModelRequest,
        prompt: Prompt,
        max_tokens: int,
        cached: int,
        emit: Emit,
        stop: threading.Event,
    ) -> tuple[str, int]:
        """Greedy generation with the grammar checked lazily: the reply and the prompt tokens reused."""
        from protoagent.models.llama_sampling import greedy_generate

        generation = greedy_generate(
            loaded.llama,
            prompt.tokens,
            reuse=cached,
            max_tokens=max_tokens,
            stop=prompt.stop,
            grammar=self._grammar(loaded, request),
            emit=lambda text: emit("text", text),
            cancelled=stop.is_set,
            close_within=min(CLOSE_RESERVE, max_tokens // 4),
        )
        return generation.text, generation.reused

    def _sample(
        self,
        loaded: LoadedModel,
        request: ModelRequest,
        prompt: Prompt,
        max_tokens: int,
        temperature: float,
        emit: Emit,
        stop: threading.Event,
    ) -> str:
        """Sampled (temperature > 0) generation through llama-cpp-python's own sampler chain."""
        pieces: list[str] = []
        chunks: Iterator[Any] = loaded.llama.create_completion(
            prompt=prompt.tokens,
            max_tokens=max_tokens,
            temperature=temperature,
            stop=prompt.stop,
            grammar=self._grammar(loaded, request),
            stream=True,
        )
        for chunk in chunks:
            if stop.is_set():
                break
            text = chunk["choices"][0]["text"]
            if text:
                pieces.append(text)
                emit("text", text)
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
        return "".join(pieces)

    def _grammar(self, loaded: LoadedModel, request: ModelRequest) -> Any:
        wanted = request.output_schema if wants_structured_output(request) else action_schema(request.tools)
        schema = json.dumps(wanted)
        grammar = loaded.grammars.get(schema)
        if grammar is None:
            from llama_cpp.llama_grammar import LlamaGrammar

            grammar = LlamaGrammar.from_json_schema(schema, verbose=False)
            loaded.grammars[schema] = grammar
        return grammar


def resolve_gguf(rest: str, config: ModelConfig) -> tuple[Path, str]:
    """The GGUF file and model name a ``local[:ALIAS|:PATH]`` spec names."""
    if not rest:
        model = catalog.default_embedded()
        return catalog.embedded_gguf_path(model), model.alias
    embedded = catalog.find_embedded(rest)
    if embedded is not None:
        return catalog.embedded_gguf_path(embedded), embedded.alias
    path = Path(rest).expanduser()
    if not path.is_absolute() and config.base_dir is not None:
        path = config.base_dir / path
    if not path.is_file():
        aliases = ", ".join(model.alias for model in catalog.EMBEDDED_MODELS)
        raise ConfigError(f"no GGUF file at {str(path)!r}; use 'local', 'local:PATH.gguf' or one of: {aliases}")
    return path, path.name


def from_spec(rest: str, config: ModelConfig) -> LlamaLocalProvider:
    """``local`` (the embedded default), ``local:<alias>`` or ``local:<path to a .gguf>``."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError("the local model needs llama-cpp-python; install protoagent[local]")
    path, name = resolve_gguf(rest, config)
    n_ctx = config.context_window
    if n_ctx is None:
        trained = catalog.read_gguf_context_length(path)
        n_ctx = min(catalog.FALLBACK_CONTEXT_WINDOW, trained or catalog.FALLBACK_CONTEXT_WINDOW)
    return LlamaLocalProvider(path, model=name, n_ctx=n_ctx, max_output_tokens=config.max_output_tokens)
