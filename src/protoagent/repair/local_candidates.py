"""Candidates from the embedded model, decoded in-process one line at a time.

For each line the harness ranked, the model is shown the numbered function, the failing
assertion and the line as it is now, and writes the replacement line: its greedy line first,
then lines that depart from the old one where the model itself ranks another token high, the
rest written by the model (``llama_sampling.line_variants``). Lines identical to the old one are
dropped. Decoding runs in a worker thread and stops between tokens when the repair is cancelled.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

from protoagent.models.llama_local import LlamaLocalProvider, LoadedModel, load_model, render_prompt
from protoagent.models.types import Message
from protoagent.repair.candidates import SYSTEM, CandidateEdit, RepairFocus, admissible, line_prompt

DEFAULT_SAMPLES = 2
"""Sampled rounds after the greedy ones (each round departs at the same places)."""


@dataclass(slots=True)
class LocalLineCandidates:
    """Replacement lines the embedded model writes, line by line in the focus's ranked order."""

    provider: LlamaLocalProvider
    seed: int = 0
    samples: int = DEFAULT_SAMPLES
    per_position: int = 3

    async def propose(self, focus: RepairFocus) -> AsyncIterator[CandidateEdit]:
        stop = threading.Event()
        loaded = await asyncio.to_thread(load_model, self.provider.path, self.provider.n_ctx)
        try:
            for line in focus.lines:
                lines = self._lines(loaded, focus, line, stop)
                while True:
                    new = await asyncio.to_thread(_next, loaded, lines)
                    if new is None:
                        break
                    edit = admissible(focus, focus.function.path, focus.function.line(line), new)
                    if edit is not None:
                        yield edit
        finally:
            # A cancelled repair (Ctrl-C) stops the decoding thread at its next token.
            stop.set()

    def _lines(self, loaded: LoadedModel, focus: RepairFocus, line: int, stop: threading.Event) -> Iterator[str]:
        from protoagent.models.llama_sampling import line_variants

        llama = loaded.llama
        messages = [Message(role="system", content=SYSTEM), Message(role="user", content=line_prompt(focus, line))]
        prompt = render_prompt(loaded, messages).tokens
        old = llama.tokenize(focus.function.line(line).strip().encode("utf-8"), add_bos=False, special=False)
        return line_variants(
            llama,
            prompt,
            list(old),
            per_position=self.per_position,
            samples=self.samples,
            seed=self.seed + line,
            cancelled=stop.is_set,
        )


def _next(loaded: LoadedModel, lines: Iterator[str]) -> str | None:
    with loaded.lock:
        return next(lines, None)


def local_source(provider: Any, seed: int) -> LocalLineCandidates | None:
    """The embedded-model source when ``provider`` runs in this process, else ``None``."""
    return LocalLineCandidates(provider, seed=seed) if isinstance(provider, LlamaLocalProvider) else None
