"""Greedy decoding for the embedded model with the action grammar checked lazily.

llama.cpp's grammar sampler, run inside ``create_completion``'s sampler chain, tests every token
of the vocabulary (about 49k for SmolLM2) against the grammar at every step. Under greedy decoding
only the winner matters, so this loop takes the unconstrained argmax first and asks the grammar
about that one token, as llama.cpp's own ``common_sampler`` does. When the grammar rejects it,
the best few tokens are checked in greedy order, and only when none of them settles the choice
is the whole vocabulary filtered. Every step picks the token the full chain (grammar, then
greedy) picks: the first maximal logit among the tokens the grammar allows.

This module needs llama-cpp-python (and so numpy); ``llama_local`` imports it only when it runs.
"""

from __future__ import annotations

import codecs
import ctypes
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt

from protoagent.errors import ProviderError

PROVIDER = "local"
CANDIDATE_DTYPE = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
"""The layout of llama.cpp's ``llama_token_data``, so a numpy array can serve as the candidate list."""
TOP_CANDIDATES = 32
"""How many of the best tokens are checked at once when the grammar rejects the greedy choice."""


@dataclass(frozen=True, slots=True)
class Generation:
    """What one greedy generation produced."""

    tokens: list[int]
    """Generated tokens, without the end-of-generation token (as ``create_completion`` counts them)."""
    text: str
    """The reply text: everything emitted, cut before a stop string."""
    reused: int
    """Prompt tokens taken from the KV cache instead of being evaluated."""
    finish: str
    """``eog`` (the model ended the reply), ``stop`` (a stop string), ``length`` or ``cancelled``."""
    top_checks: int = 0
    """Steps where the grammar rejected the greedy token and the best few tokens settled the choice."""
    full_checks: int = 0
    """Steps where the grammar had to filter the whole vocabulary."""
    closing_steps: int = 0
    """Steps decided under closing pressure (budget nearly spent, or a loop)."""


class Candidates:
    """A numpy array laid out as llama.cpp's ``llama_token_data[size]``, and the
    ``llama_token_data_array`` that hands it to a sampler."""

    def __init__(self, size: int) -> None:
        if CANDIDATE_DTYPE.itemsize != ctypes.sizeof(llama_cpp.llama_token_data):
            raise ProviderError("llama_token_data has an unexpected layout", provider=PROVIDER)
        self.data = np.zeros(size, dtype=CANDIDATE_DTYPE)
        pointer = self.data.ctypes.data_as(llama_cpp.llama_token_data_p)
        self._array = llama_cpp.llama_token_data_array(pointer, size, -1, False)

    def filter(self, sampler: Any, ids: npt.NDArray[np.intp], logits: npt.NDArray[np.float32]) -> npt.NDArray[Any]:
        """The logits after ``sampler`` has seen these candidates (-inf where the grammar rejects one)."""
        self.data["id"] = ids
        self.data["logit"] = logits
        self.data["p"] = 0.0
        self._array.size = len(self.data)
        self._array.selected = -1
        self._array.sorted = False
        llama_cpp.llama_sampler_apply(sampler, ctypes.byref(self._array))
        return self.data["logit"]


class GrammarGate:
    """A standalone llama.cpp grammar sampler asked about as few tokens as the greedy choice needs.

    First the argmax alone; if the grammar rejects it, the ``TOP_CANDIDATES`` best tokens in the
    order greedy decoding ranks them (logit descending, then token id); only if none of those
    settles the choice, the whole vocabulary. Owns the sampler: ``close`` frees it.
    """

    def __init__(self, vocab: Any, gbnf: str, root: str, n_vocab: int) -> None:
        self._sampler: Any = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), root.encode("utf-8"))
        if not self._sampler:
            raise ProviderError("llama.cpp rejected the action grammar", provider=PROVIDER)
        self._n_vocab = n_vocab
        self._one = Candidates(1)
        self._top = Candidates(min(TOP_CANDIDATES, n_vocab))
        self._all: Candidates | None = None
        self.top_checks = 0
        """Steps where the greedy choice was rejected and the best few tokens settled the choice."""
        self.full_checks = 0
        """Steps that needed the whole vocabulary filtered."""

    def close(self) -> None:
        if self._sampler:
            llama_cpp.llama_sampler_free(self._sampler)
            self._sampler = None

    def choose(self, logits: npt.NDArray[np.float32]) -> int:
        """The greedy token among those the grammar allows next: the first (lowest id) of the
        highest logit, exactly what llama.cpp's grammar-then-greedy sampler chain returns."""
        token = np.argmax(logits, keepdims=True)
        if not math.isinf(float(self._one.filter(self._sampler, token, logits[token])[0])):
            return int(token[0])
        best = self._best_of_top(logits)
        if best is not None:
            self.top_checks += 1
            return best
        self.full_checks += 1
        return self._best_of_all(logits)

    def accept(self, token: int) -> None:
        """Advance the grammar past ``token`` (which ``choose`` returned)."""
        llama_cpp.llama_sampler_accept(self._sampler, token)

    def _best_of_top(self, logits: npt.NDArray[np.float32]) -> int | None:
        """The best allowed token if one of the top few is allowed and provably beats the rest."""
        size = len(self._top.data)
        if size >= len(logits):
            return None
        top = np.argpartition(logits, -size)[-size:]
        ranked = top[np.lexsort((top, -logits[top]))]
        filtered = self._top.filter(self._sampler, ranked, logits[ranked])
        kept = np.flatnonzero(~np.isinf(filtered))
        # A token outside the top set can tie the set's lowest logit and come first by id.
        if kept.size == 0 or filtered[kept[0]] <= logits[ranked[-1]]:
            return None
        return int(ranked[kept[0]])

    def _best_of_all(self, logits: npt.NDArray[np.float32]) -> int:
        if self._all is None:
            self._all = Candidates(self._n_vocab)
        filtered = self._all.filter(self._sampler, np.arange(self._n_vocab), logits)
        best = int(np.argmax(filtered))
        if math.isinf(float(filtered[best])):
            raise ProviderError("the action grammar allows no next token", provider=PROVIDER)
        return best


class TextStream:
    """Reply text from token pieces, released as whole characters and never into a stop string.

    Pieces are bytes that may split a UTF-8 character; an incremental decoder keeps the partial
    bytes until the character completes. Text that could be the start of a stop string is held
    back until it is known not to be one.
    """

    def __init__(self, stop: Sequence[str], emit: Callable[[str], None]) -> None:
        self._stop = [s for s in stop if s]
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="ignore")
        self._emit = emit
        self._released: list[str] = []
        self._pending = ""

    def feed(self, piece: bytes) -> bool:
        """Take one token's bytes; ``True`` once a stop string has appeared (the text ends before it)."""
        self._pending += self._decoder.decode(piece)
        found = [at for at in (self._pending.find(s) for s in self._stop) if at >= 0]
        if found:
            self._pending = self._pending[: min(found)]
            self._release(len(self._pending))
            return True
        self._release(len(self._pending) - self._held())
        return False

    def finish(self) -> str:
        """Release what is still held (bytes of an unfinished character are dropped); the whole text."""
        self._release(len(self._pending))
        return "".join(self._released)

    def _held(self) -> int:
        """Length of the longest end of the pending text that begins a stop string."""
        pending = self._pending
        held = 0
        for stop in self._stop:
            for size in range(min(len(stop) - 1, len(pending)), held, -1):
                if pending.endswith(stop[:size]):
                    held = size
                    break
        return held

    def _release(self, count: int) -> None:
        if count > 0:
            text, self._pending = self._pending[:count], self._pending[count:]
            self._released.append(text)
            self._emit(text)


def grammar_source(grammar: Any) -> tuple[str, str]:
    """GBNF text and root rule of a ``LlamaGrammar`` (the fields its own sampler setup reads)."""
    return str(grammar._grammar), str(grammar._root)


PROMPT_CHUNK = 64
"""Prompt tokens evaluated between two cancellation checks: a few tens of milliseconds on two cores,
so a person's Ctrl-C stops even the evaluation of a long prompt within a second."""


class GenerationCancelled(Exception):
    """The caller cancelled while the prompt was being evaluated."""


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


def evaluate_prompt(
    llama: Any, tokens: Sequence[int], reuse: int, cancelled: Callable[[], bool] = lambda: False
) -> int:
    """Evaluate ``tokens`` keeping the first ``reuse`` of them from the KV cache; how many were kept.

    Mirrors ``Llama.generate``: the cache is cut after the shared prefix and only the rest is
    evaluated, in chunks of ``PROMPT_CHUNK`` with ``cancelled`` asked between them (raising
    ``GenerationCancelled``; the cache then holds a prefix of the prompt, which the next call
    reuses or cuts). ``reuse`` is below ``len(tokens)``, so at least the last prompt token is
    evaluated and its logits are fresh. A cache that cannot be cut (some recurrent models) is cleared.
    """
    if reuse > 0 and llama._ctx.kv_cache_seq_rm(-1, reuse, -1):
        llama.n_tokens = reuse
    else:
        llama.reset()
        reuse = 0
    rest = list(tokens[reuse:])
    for start in range(0, len(rest), PROMPT_CHUNK):
        if cancelled():
            raise GenerationCancelled
        llama.eval(rest[start : start + PROMPT_CHUNK])
    return reuse


CLOSING_CHARS = frozenset('"}],')
"""Punctuation that ends a JSON string, value or container."""
CLOSING_BOOST = 1.0e4
LOOP_MIN_SPAN = 16
"""A reply whose last tokens repeat one unit (up to ``LOOP_MAX_PERIOD`` tokens) over at least this
many tokens is looping; small models do this inside JSON strings until the token budget ends."""
LOOP_MAX_PERIOD = 8
_CLOSERS: dict[int, npt.NDArray[np.float32]] = {}


def closing_bias(llama: Any) -> npt.NDArray[np.float32]:
    """A per-token bonus that makes closing win (cached per model): tokens made only of closing
    punctuation (and spaces) get twice the bonus of other tokens holding a quote, since a quote
    inside a string ends it; every other token gets none."""
    key = id(llama)
    found = _CLOSERS.get(key)
    if found is None:
        n_vocab = int(llama.n_vocab())
        found = np.zeros(n_vocab, dtype=np.float32)
        for token in range(n_vocab):
            piece = _piece(llama, token).strip()
            if piece and set(piece) <= CLOSING_CHARS:
                found[token] = 2 * CLOSING_BOOST
            elif '"' in piece:
                found[token] = CLOSING_BOOST
        _CLOSERS[key] = found
    return found


def _piece(llama: Any, token: int) -> str:
    return bytes(llama.detokenize([token])).decode("utf-8", "ignore")


def looping(tokens: Sequence[int]) -> bool:
    """True when the last ``LOOP_MIN_SPAN`` or more tokens repeat one short unit."""
    if len(tokens) < LOOP_MIN_SPAN:
        return False
    tail = tokens[-LOOP_MIN_SPAN:]
    return any(
        all(tail[i] == tail[i % period] for i in range(LOOP_MIN_SPAN)) for period in range(1, LOOP_MAX_PERIOD + 1)
    )


def greedy_generate(
    llama: Any,
    prompt: Sequence[int],
    *,
    reuse: int,
    max_tokens: int,
    stop: Sequence[str],
    grammar: Any | None,
    emit: Callable[[str], None],
    cancelled: Callable[[], bool] = lambda: False,
    close_within: int = 0,
) -> Generation:
    """Greedy (temperature 0) generation from ``prompt``, constrained by ``grammar`` when given.

    ``reuse`` is the cached prefix to keep (``cached_prefix``). Text reaches ``emit``
    as it is decoded. The last chosen token is not evaluated, as in ``create_completion``.

    ``close_within`` (with a grammar) makes a reply end as a whole action: in its last
    ``close_within`` tokens of budget, or once it loops, the allowed tokens that close a JSON
    string or container win over the rest, so the grammar walks the shortest way to the end
    instead of being cut off inside a string. 0 keeps plain greedy decoding.
    """
    try:
        reused = evaluate_prompt(llama, prompt, reuse, cancelled)
    except GenerationCancelled:
        return Generation([], "", 0, "cancelled")
    vocab, ctx, n_vocab = llama._model.vocab, llama._ctx.ctx, int(llama.n_vocab())
    text = TextStream(stop, emit)
    tokens: list[int] = []
    finish = "length"
    gate = GrammarGate(vocab, *grammar_source(grammar), n_vocab) if grammar is not None else None
    closers = closing_bias(llama) if gate is not None and close_within > 0 else None
    closing = 0
    try:
        while len(tokens) < max_tokens:
            if cancelled():
                finish = "cancelled"
                break
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, -1), shape=(n_vocab,))
            if closers is not None and (max_tokens - len(tokens) <= close_within or looping(tokens)):
                logits = logits + closers
                closing += 1
            token = gate.choose(logits) if gate is not None else int(np.argmax(logits))
            if llama_cpp.llama_vocab_is_eog(vocab, token):
                finish = "eog"
                break
            tokens.append(token)
            if text.feed(bytes(llama.detokenize([token]))):
                finish = "stop"
                break
            if len(tokens) >= max_tokens:
                break
            if gate is not None:
                gate.accept(token)
            llama.eval([token])
    finally:
        if gate is not None:
            gate.close()
    checks = (gate.top_checks, gate.full_checks) if gate is not None else (0, 0)
    return Generation(tokens, text.finish(), reused, finish, *checks, closing_steps=closing)


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where a replacement line departs from the old one: the model's own choice of another token."""

    position: int
    """Index in the old line's tokens where the new text starts to differ."""
    token: int
    logprob: float
    """The model's log-probability of ``token`` there, after the old line's first ``position`` tokens."""


def line_variants(
    llama: Any,
    prompt: Sequence[int],
    old: Sequence[int],
    *,
    per_position: int = 3,
    max_tokens: int = 40,
    samples: int = 0,
    temperature: float = 0.8,
    seed: int = 0,
    cancelled: Callable[[], bool] = lambda: False,
) -> Iterator[str]:
    """Replacement lines the model writes for one old line, most likely first, without repeats.

    ``prompt`` asks for the line; ``old`` is the old line's text as tokens. First the model's own
    greedy line. Then, for every position of the old line, the ``per_position`` tokens the model
    ranks highest there other than the old token (ordered by the model's probability over all
    positions): the line keeps the old text before that position and the model writes the rest,
    greedily. Then ``samples`` rounds of the same departures with the rest sampled at
    ``temperature`` (seeded). Every token after the kept beginning is the model's; a line ends at
    a newline or an end-of-generation token. ``cancelled`` is asked between tokens.
    """
    rng = np.random.default_rng(seed)
    seen: set[str] = set()
    try:
        for line in _variants(
            llama, list(prompt), list(old), per_position, max_tokens, samples, temperature, rng, cancelled
        ):
            if line not in seen:
                seen.add(line)
                yield line
    except GenerationCancelled:
        return


def _variants(
    llama: Any,
    prompt: list[int],
    old: list[int],
    per_position: int,
    max_tokens: int,
    samples: int,
    temperature: float,
    rng: np.random.Generator,
    cancelled: Callable[[], bool],
) -> Iterator[str]:
    max_tokens = min(max_tokens, len(old) + LINE_SLACK_TOKENS)
    yield _continue(llama, prompt, [], max_tokens, None, rng, cancelled)
    divergences = _divergences(llama, prompt, old, per_position, cancelled)
    for sampled in [None] + [temperature] * samples:
        for split in divergences:
            yield _continue(llama, prompt, [*old[: split.position], split.token], max_tokens, sampled, rng, cancelled)


def _divergences(
    llama: Any, prompt: list[int], old: list[int], per_position: int, cancelled: Callable[[], bool]
) -> list[Divergence]:
    """Every position's best other tokens, most probable first (the old line fed token by token)."""
    _evaluate(llama, prompt, cancelled)
    vocab, found = llama._model.vocab, []
    for position in range(len(old) + 1):
        if cancelled():
            raise GenerationCancelled
        logits = _logits(llama).astype(np.float64)
        logprobs = logits - float(np.logaddexp.reduce(logits))
        expected = old[position] if position < len(old) else -1
        taken = 0
        for token in np.argsort(-logits)[: per_position + 8]:
            token = int(token)
            piece = _piece(llama, token)
            if token == expected or llama_cpp.llama_vocab_is_eog(vocab, token) or "\n" in piece or not piece.strip():
                continue
            found.append(Divergence(position, token, float(logprobs[token])))
            taken += 1
            if taken == per_position:
                break
        if position < len(old):
            llama.eval([old[position]])
    return sorted(found, key=lambda d: -d.logprob)


def _continue(
    llama: Any,
    prompt: list[int],
    start: list[int],
    max_tokens: int,
    temperature: float | None,
    rng: np.random.Generator,
    cancelled: Callable[[], bool],
) -> str:
    """The line that begins with ``start`` and goes on as the model writes it (greedy without a
    temperature), cut at its first newline."""
    _evaluate(llama, [*prompt, *start], cancelled)
    vocab = llama._model.vocab
    data = bytes(llama.detokenize(start)) if start else b""
    for _ in range(max_tokens):
        if b"\n" in data:
            break
        if cancelled():
            raise GenerationCancelled
        logits = _logits(llama)
        token = int(np.argmax(logits)) if temperature is None else _sample(logits, temperature, rng)
        if llama_cpp.llama_vocab_is_eog(vocab, token):
            break
        data += bytes(llama.detokenize([token]))
        llama.eval([token])
    return data.decode("utf-8", "ignore").split("\n", 1)[0].rstrip()


SAMPLE_TOP_K = 40
LINE_SLACK_TOKENS = 12
"""A replacement line may run this many tokens past the old line's length (a fix is rarely longer)."""


def _sample(logits: npt.NDArray[np.float32], temperature: float, rng: np.random.Generator) -> int:
    top = np.argpartition(logits, -SAMPLE_TOP_K)[-SAMPLE_TOP_K:]
    scaled = logits[top].astype(np.float64) / max(temperature, 1e-3)
    weights = np.exp(scaled - scaled.max())
    return int(top[rng.choice(len(top), p=weights / weights.sum())])


def _logits(llama: Any) -> npt.NDArray[np.float32]:
    n_vocab = int(llama.n_vocab())
    return np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llama._ctx.ctx, -1), shape=(n_vocab,)).copy()


def _evaluate(llama: Any, tokens: Sequence[int], cancelled: Callable[[], bool]) -> None:
    """Make ``tokens`` the evaluated sequence, keeping the longest shared prefix of the cache."""
    evaluate_prompt(llama, tokens, cached_prefix(llama, tokens), cancelled)
