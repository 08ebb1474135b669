"""The ``code_context`` tool: one structural operation on one exact symbol, read-only."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from protoagent.navigation.query import MAX_RESULTS, MAX_SOURCES_SHOWN, Answer, definition_read, render_definition
from protoagent.navigation.service import answer, render, to_json
from protoagent.navigation.symbols import symbol_problem, words_in
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.workspace.paths import locate
from protoagent.workspace.tools import RAW_TEXT_ROLES

SMALL_PROFILE_RESULTS = 15
HOME_SERVICE = "data_home"
"""Service key of the data home the index cache lives in (the environment's when absent)."""


class CodeContextInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    symbol: str
    """An exact symbol of at most ``MAX_SYMBOL_CHARS`` characters: the validator checks it and says
    why a value is not one (the declared schema leaves the check out)."""
    operation: Literal["definition", "references", "callers", "callees", "outline"]
    path: str | None = None

    @field_validator("symbol")
    @classmethod
    def _exact(cls, value: str) -> str:
        """The schema's own check, independent of the service's: prose and regexes never pass."""
        problem = symbol_problem(value)
        if problem is None:
            return value
        words = [w for w in words_in(value) if len(w) > 2][:5]
        hint = f"; identifiers in it: {', '.join(words)}" if words else ""
        raise ValueError(f"{problem}, not an exact symbol such as 'Client.send'; text is never searched here{hint}")


class CodeContextTool(Tool[CodeContextInput]):
    name = "code_context"
    description = "Look up an exact symbol, e.g. Client.send."
    metadata = ToolMetadata(effect="read")

    def prepare(self, args: CodeContextInput, ctx: ToolContext) -> Prepared:
        where = locate(ctx.root, args.path or ".", ctx.services.extra_roots)
        under = None if where.rel == "." else where.rel
        plan = (where.root, args.operation, args.symbol, under)
        return Prepared(f"{args.operation} of {args.symbol} in {where.shown}", "read", state=plan)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        root, operation, symbol, under = prepared.state
        home = ctx.services.data_home
        limit = SMALL_PROFILE_RESULTS if ctx.profile == "small" else MAX_RESULTS

        def run() -> ToolOutput:
            result = answer(Path(root), operation, str(symbol), under, home=home, limit=limit)
            numbered = ctx.agent_role not in RAW_TEXT_ROLES or ctx.profile != "small"
            text, sources = _sources(Path(root), result, numbered)
            data = to_json(result) | ({"sources": sources} if sources else {})
            return ToolOutput(render(result) + text, data=data)

        return await asyncio.to_thread(run)


def _sources(root: Path, result: Answer, numbered: bool) -> tuple[str, list[dict[str, Any]]]:
    """A definition answer of a few results goes on with their source lines, as ``read_file``
    shows them, so an edit can follow without a read; the lines shown are also returned as
    ``read_file`` records them, so the log counts them as read (a worker is handed them)."""
    if result.operation != "definition" or not 0 < len(result.results) <= MAX_SOURCES_SHOWN:
        return "", []
    reads = [(hit, definition_read(root, hit, numbered=numbered)) for hit in result.results]
    shown = [(hit, read) for hit, read in reads if read is not None]
    text = "".join("\n\n" + render_definition(hit, read).rstrip("\n") for hit, read in shown)
    return text, [read for _, read in shown]


NAVIGATION_TOOLS: tuple[type[Tool[Any]], ...] = (CodeContextTool,)
