"""Candidates from the embedded model, decoded in its worker process one line at a time.

For each line the harness ranked (in the window of the focus's pass: the first two of every
line, then the rest), the model is shown the numbered function, the failing
assertion and the line as it is now, and writes the replacement line: its greedy line first,
then lines that depart from the old one where the model itself ranks another token high, the
rest written by the model (``llama_sampling.line_variants``, run by ``local_worker``). Lines
identical to the old one are dropped. Each line is asked for when the search wants the next
one, so the model decodes nothing the search does not use; a cancelled repair cancels the
line being decoded.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from protoagent.models.llama_local import LlamaLocalProvider, chat_messages
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
        worker = self.provider.worker
        try:
            for line in focus.lines:
                messages = [
                    Message(role="system", content=SYSTEM),
                    Message(role="user", content=line_prompt(focus, line)),
                ]
                opened = {
                    "op": "variants",
                    "chat": chat_messages(messages),
                    "old": focus.function.line(line).strip(),
                    "per_position": self.per_position,
                    "samples": self.samples,
                    "seed": self.seed + line,
                }
                handle = (await asyncio.to_thread(worker.request, opened, stop=stop))["handle"]
                written = 0
                while focus.take is None or written < focus.skip + focus.take:
                    reply = await asyncio.to_thread(worker.request, {"op": "next", "handle": handle}, stop=stop)
                    new = reply["line"]
                    if new is None:
                        break
                    written += 1
                    if written <= focus.skip:
                        continue  # offered in an earlier pass
                    edit = admissible(focus, focus.function.path, focus.function.line(line), str(new))
                    if edit is not None:
                        yield edit
        finally:
            # A cancelled repair (Ctrl-C) stops the worker's decoding at its next token.
            stop.set()


def local_source(provider: Any, seed: int) -> LocalLineCandidates | None:
    """The embedded-model source when ``provider`` is the embedded model, else ``None``."""
    return LocalLineCandidates(provider, seed=seed) if isinstance(provider, LlamaLocalProvider) else None
