"""Candidate edits: what the model may propose in a guided repair, and how it is asked.

An edit is constrained to what can apply: its ``path`` is the shown function's file, its ``old``
is one of that function's exact lines (``edit_schema`` says so as a JSON schema, the grammar a
constrained model decodes under), and its ``new`` is free text on one line. Candidates come only
from the model: ``ProviderCandidates`` asks any provider for schema-constrained replies;
``repair.local_candidates`` drives the embedded model token by token for the same edit.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from protoagent.errors import ProviderError
from protoagent.json_form import json_form
from protoagent.models.protocol import ModelProvider
from protoagent.models.types import Message, ModelRequest, ModelTurn
from protoagent.repair.localize import Localization, SourceFunction

MAX_NEW_CHARS = 200
"""The longest replacement line a candidate may hold."""
REPAIR_AGENT = "repair"
"""The agent role candidate requests are made under (scripted turns name it)."""
SYSTEM = "You fix bugs in Python code. You rewrite one line so the failing test passes."


@dataclass(frozen=True, slots=True)
class CandidateEdit:
    """One proposed one-line edit of a shown function."""

    path: str
    line: int
    """The 1-based line number in ``path`` that ``new`` replaces."""
    old: str
    """The old line exactly as it is in the file (indentation included, no line ending)."""
    new: str
    """The replacement line (indentation included, no line ending)."""

    def to_json(self) -> dict[str, Any]:
        return json_form(self)


@dataclass(frozen=True, slots=True)
class RepairFocus:
    """What the model is shown: one function, the failing assertion, and the lines it may replace."""

    localization: Localization
    function: SourceFunction
    lines: tuple[int, ...]
    """Line numbers (in ranked order) that ``old`` may name."""
    skip: int = 0
    """Of each line's candidates, in the model's order, the first ``skip`` were offered in an
    earlier pass of the search: a source that goes line by line passes over them."""
    take: int | None = None
    """Candidates per line in this pass, at most (``None``: as many as the model has)."""


class CandidateSource(Protocol):
    """Where candidate edits come from: a model, never the harness."""

    def propose(self, focus: RepairFocus) -> AsyncIterator[CandidateEdit]: ...


def edit_schema(focus: RepairFocus, max_new: int = MAX_NEW_CHARS) -> dict[str, Any]:
    """The JSON schema of an edit that can apply: ``path`` and ``old`` are enums of the shown
    file and its exact lines, ``new`` is bounded text."""
    olds = list(dict.fromkeys(focus.function.line(n) for n in focus.lines))
    return {
        "type": "object",
        "properties": {
            "path": {"enum": [focus.function.path]},
            "old": {"enum": olds},
            "new": {"type": "string", "maxLength": max_new},
        },
        "required": ["path", "old", "new"],
        "additionalProperties": False,
    }


def admissible(focus: RepairFocus, path: object, old: object, new: object) -> CandidateEdit | None:
    """The edit when it fits ``edit_schema`` and changes something; ``None`` otherwise."""
    function = focus.function
    if path != function.path or not isinstance(old, str) or not isinstance(new, str):
        return None
    line = next((n for n in focus.lines if function.line(n) == old), None)
    if line is None or "\n" in new or len(new) > MAX_NEW_CHARS:
        return None
    new = reindent(old, new)
    if new.strip() == old.strip():
        return None
    return CandidateEdit(function.path, line, old, new)


def reindent(old: str, new: str) -> str:
    """``new`` at ``old``'s indentation (the model writes the line's text; layout is kept)."""
    indent = old[: len(old) - len(old.lstrip())]
    return indent + new.strip()


def line_prompt(focus: RepairFocus, line: int) -> str:
    """The request for one line: the numbered function, the failing assertion, the line now.
    Everything before the line's own request is the same for every line of the function, so a
    local model evaluates it once per function, not once per line."""
    old = focus.function.line(line).strip()
    return (
        f"This Python function from {focus.function.path} has a bug.\n\n"
        f"{focus.function.numbered()}\n\nA test fails:\n{focus.localization.evidence()}\n\n"
        f"The bug is on line {line}. Write the fixed line {line}. The line now is:\n{old}\n"
        "Reply with the fixed line only."
    )


def edit_prompt(focus: RepairFocus) -> str:
    """The request for a whole edit: path, one old line from the list, and its new text."""
    olds = "\n".join(f"line {n}: {focus.function.line(n).strip()}" for n in focus.lines)
    return (
        f"This Python function from {focus.function.path} has a bug.\n\n{focus.function.numbered()}\n\n"
        f"A test fails:\n{focus.localization.evidence()}\n\nLines you may replace:\n{olds}\n\n"
        'Reply with JSON {"path": ..., "old": <one line exactly>, "new": <the fixed line>}.'
    )


@dataclass(slots=True)
class ProviderCandidates:
    """Candidates from any model provider: ``attempts`` schema-constrained replies sampled at
    ``temperature`` (a scripted provider stands in for the model in tests)."""

    provider: ModelProvider
    attempts: int = 8
    temperature: float = 0.8

    async def propose(self, focus: RepairFocus) -> AsyncIterator[CandidateEdit]:
        if focus.skip or focus.lines[:1] != focus.function.ranked[:1]:
            return  # asked once per function, in its first pass: the model chooses among all lines itself
        focus = replace(focus, lines=focus.function.ranked)
        schema = edit_schema(focus)
        for _ in range(self.attempts):
            request = ModelRequest(
                system=SYSTEM,
                messages=(Message(role="user", content=edit_prompt(focus)),),
                action_mode="json",
                output_schema=schema,
                temperature=self.temperature,
                max_output_tokens=160,
                agent_role=REPAIR_AGENT,
            )
            try:
                reply = await _final_text(self.provider, request)
            except ProviderError:
                return  # the model has nothing more to offer (a scripted model ran out)
            edit = _parse(focus, reply)
            if edit is not None:
                yield edit


async def _final_text(provider: ModelProvider, request: ModelRequest) -> str:
    text = ""
    async for event in provider.stream(request):
        if isinstance(event, ModelTurn):
            text = event.text
    return text


def _parse(focus: RepairFocus, reply: str) -> CandidateEdit | None:
    try:
        data = json.loads(reply)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, Mapping):
        return None
    return admissible(focus, data.get("path"), data.get("old"), data.get("new"))


def focus_on(
    localization: Localization,
    function: SourceFunction,
    skip: int = 0,
    take: int | None = None,
    lines: slice = slice(None),
) -> RepairFocus:
    """The focus for ``function``: its ranked ``lines``, the per-line window ``skip``/``take``."""
    return RepairFocus(localization, function, function.ranked[lines], skip, take)
