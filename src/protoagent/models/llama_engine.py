"""The embedded model's own work, run inside its worker process: loading, prompts, generation.

Only ``local_worker`` (and tests and benches that measure the model directly) import this
module: it needs llama-cpp-python, whose native code may crash, so the harness process never
loads it. The model loads once per worker (cached by path and context size); consecutive
requests share one ``Llama`` instance, so a prompt that extends the previous one re-uses its KV
cache. Greedy requests (temperature 0) decode in ``llama_sampling``, which checks the grammar
against the greedy choice only; sampled ones go through ``create_completion``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from protoagent.errors import LimitExceeded
from protoagent.models.model_slots import ModelSlots

CLOSE_RESERVE = 32
"""Output tokens kept for closing an action: a reply still inside a JSON string then is steered to
its end by the grammar's shortest path, instead of being cut off (see ``greedy_generate``)."""


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


def load_model(path: Path, n_ctx: int) -> LoadedModel:
    """The process-wide model for this file and context size, loading it on first use."""
    return _LOADED.get(path, n_ctx)


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


_LOADED: ModelSlots[LoadedModel] = ModelSlots(_load, lambda loaded: loaded.llama.close())
"""Loaded models, freed at exit while the interpreter is whole (llama.cpp's own finalizer fails at teardown)."""


@dataclass(frozen=True, slots=True)
class Prompt:
    """A rendered prompt: its tokens and the strings that end a reply."""

    tokens: list[int]
    stop: list[str]


Chat = Sequence[Mapping[str, str]]
"""Messages as ``{"role": ..., "content": ...}``: what the harness sends the worker."""


def render_prompt(model: LoadedModel, chat: Chat) -> Prompt:
    """Tokens for the conversation, using the model's chat template or a plain turn format."""
    llama = model.llama
    turns = [{"role": m["role"], "content": m["content"]} for m in chat]
    if model.template:
        eos = _token_text(llama, llama.token_eos())
        text = _apply_template(model.template, turns, eos, _token_text(llama, llama.token_bos()))
        if text is not None:
            tokens = llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)
            return Prompt(tokens=list(tokens), stop=[eos] if eos else [])
    text, stop = manual_prompt(turns, model.architecture)
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


def count_tokens(model: LoadedModel, text: str) -> int:
    """Tokens of ``text`` under the model's own tokenizer."""
    with model.lock:
        return len(model.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


@dataclass(frozen=True, slots=True)
class GenerateJob:
    """One reply to generate: the conversation, the JSON schema the reply must match, budgets."""

    chat: Chat
    schema: str
    """The JSON schema (as text) the grammar holds the reply to."""
    limit: int
    """Output tokens at most (the window's room may allow fewer)."""
    temperature: float = 0.0
    close: bool = True
    """Steer a reply near its budget's end to a whole action (``CLOSE_RESERVE``); the probe
    turns it off, so it measures decoding and not the one-time setup of the closing bias."""


def generate(
    model: LoadedModel, n_ctx: int, job: GenerateJob, emit: Callable[[str], None], cancelled: Callable[[], bool]
) -> dict[str, Any]:
    """Generate one reply, text pieces to ``emit``; its usage, the seconds it took (``seconds``;
    ``decode_seconds`` from its first text on) and the prompt tokens llama.cpp evaluated for it
    (``evaluated``: the rest came from the KV cache)."""
    from protoagent.models.llama_sampling import cached_prefix

    with model.lock:
        llama = model.llama
        prompt = render_prompt(model, job.chat)
        room = n_ctx - len(prompt.tokens)
        if room <= 0:
            raise LimitExceeded(
                f"prompt has {len(prompt.tokens)} tokens but the context window is {n_ctx}", limit="context_window"
            )
        max_tokens = min(job.limit, room)
        cached = cached_prefix(llama, prompt.tokens)
        evaluated_before = prompt_evaluations(llama)
        started = time.monotonic()
        first: list[float] = []

        def timed(text: str) -> None:
            if not first:
                first.append(time.monotonic())
            emit(text)

        decoding = _Decoding(model, job, prompt, max_tokens, timed, cancelled)
        if job.temperature == 0.0:
            reply, cached = _greedy(decoding, cached)
        else:
            reply = _sample(decoding)
        ended = time.monotonic()
        output = llama.tokenize(reply.encode("utf-8"), add_bos=False, special=True)
        evaluated = prompt_evaluations(llama) - evaluated_before
    usage = {"input_tokens": len(prompt.tokens), "output_tokens": len(output), "cached_input_tokens": cached}
    # From the first text to the end: decoding alone, without the prompt's evaluation.
    decode_seconds = ended - first[0] if first else 0.0
    return {"usage": usage, "seconds": ended - started, "decode_seconds": decode_seconds, "evaluated": evaluated}


def prompt_evaluations(llama: Any) -> int:
    """Prompt tokens llama.cpp has evaluated in this context so far (its own counter)."""
    import llama_cpp

    return int(llama_cpp.llama_perf_context(llama._ctx.ctx).n_p_eval)


@dataclass(frozen=True, slots=True)
class _Decoding:
    """One reply to decode: the model, the job, its rendered prompt and budget, where text goes."""

    model: LoadedModel
    job: GenerateJob
    prompt: Prompt
    max_tokens: int
    emit: Callable[[str], None]
    cancelled: Callable[[], bool]


def _greedy(decoding: _Decoding, cached: int) -> tuple[str, int]:
    """Greedy generation with the grammar checked lazily: the reply and the prompt tokens reused."""
    from protoagent.models.llama_sampling import greedy_generate

    job, max_tokens = decoding.job, decoding.max_tokens
    generation = greedy_generate(
        decoding.model.llama,
        decoding.prompt.tokens,
        reuse=cached,
        max_tokens=max_tokens,
        stop=decoding.prompt.stop,
        grammar=grammar_for(decoding.model, job.schema),
        emit=decoding.emit,
        cancelled=decoding.cancelled,
        close_within=min(CLOSE_RESERVE, max_tokens // 4) if job.close else 0,
    )
    return generation.text, generation.reused


def _sample(decoding: _Decoding) -> str:
    """Sampled (temperature > 0) generation through llama-cpp-python's own sampler chain."""
    pieces: list[str] = []
    chunks: Iterator[Any] = decoding.model.llama.create_completion(
        prompt=decoding.prompt.tokens,
        max_tokens=decoding.max_tokens,
        temperature=decoding.job.temperature,
        stop=decoding.prompt.stop,
        grammar=grammar_for(decoding.model, decoding.job.schema),
        stream=True,
    )
    for chunk in chunks:
        if decoding.cancelled():
            break
        text = chunk["choices"][0]["text"]
        if text:
            pieces.append(text)
            decoding.emit(text)
    close = getattr(chunks, "close", None)
    if close is not None:
        close()
    return "".join(pieces)


def grammar_for(model: LoadedModel, schema: str) -> Any:
    """The llama.cpp grammar of a JSON schema, built once per model and schema."""
    grammar = model.grammars.get(schema)
    if grammar is None:
        from llama_cpp.llama_grammar import LlamaGrammar

        grammar = LlamaGrammar.from_json_schema(schema, verbose=False)
        model.grammars[schema] = grammar
    return grammar


@dataclass(frozen=True, slots=True)
class VariantsJob:
    """Replacement lines for one old line (guided repair): the prompt asking for it and the old text."""

    chat: Chat
    old: str
    per_position: int = 3
    samples: int = 2
    seed: int = 0


def line_variants(model: LoadedModel, job: VariantsJob, cancelled: Callable[[], bool]) -> Iterator[str]:
    """The model's replacement lines for ``job.old``, most likely first (``llama_sampling.line_variants``);
    the model's lock is held only while each line is decoded."""
    from protoagent.models.llama_sampling import line_variants as variants

    with model.lock:
        prompt = render_prompt(model, job.chat).tokens
        old = model.llama.tokenize(job.old.encode("utf-8"), add_bos=False, special=False)
    lines = variants(
        model.llama,
        prompt,
        list(old),
        per_position=job.per_position,
        samples=job.samples,
        seed=job.seed,
        cancelled=cancelled,
    )
    while True:
        with model.lock:
            line = next(lines, None)
        if line is None:
            return
        yield line
