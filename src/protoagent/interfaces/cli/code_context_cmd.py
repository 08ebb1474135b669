"""``protoagent code-context OPERATION SYMBOL --repo DIR [--json]``: structural navigation of an exact symbol."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from protoagent.errors import ToolRejected

if TYPE_CHECKING:
    from protoagent.navigation.query import Operation

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2


class OperationChoice(StrEnum):
    definition = "definition"
    references = "references"
    callers = "callers"
    callees = "callees"
    outline = "outline"


def code_context(
    operation: Annotated[OperationChoice, typer.Argument(help="What to find.")],
    symbol: Annotated[str, typer.Argument(help="An exact symbol: intword, Client.send, module.function.")],
    repo: Annotated[Path, typer.Option(help="Repository to read.")] = Path("."),
    path: Annotated[str | None, typer.Option(help="Only results in files under this path.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Find the definition, references, callers, callees or outline of an exact symbol (never a text search)."""
    raise typer.Exit(code_context_command(operation.value, symbol, repo, path, as_json))


def code_context_command(operation: str, symbol: str, repo: Path, path: str | None, as_json: bool) -> int:
    """Print the answer (text or JSON with repository-relative paths) and return the exit code.

    0: answered (possibly with no results); 1: the symbol was rejected (prose, a regex, unknown),
    with the nearest exact candidates; 2: ``repo`` is not a directory.
    """
    from protoagent.navigation.service import answer, render, to_json
    from protoagent.workspace.paths import normalize_relpath

    if not repo.is_dir():
        return _fail(f"{str(repo)!r} is not a directory; pass an existing repository with --repo", as_json, EXIT_USAGE)
    root = repo.resolve()
    try:
        under = normalize_relpath(root, path) if path else None
        result = answer(root, cast("Operation", operation), symbol, None if under == "." else under)
    except ToolRejected as rejected:
        return _fail(rejected.message, as_json, EXIT_REJECTED, rejected.details.get("candidates"))
    if as_json:
        sys.stdout.write(json.dumps(to_json(result), indent=2) + "\n")
    else:
        typer.echo(render(result))
    return EXIT_OK


def _fail(message: str, as_json: bool, code: int, candidates: object = None) -> int:
    if as_json:
        out: dict[str, object] = {"status": "error", "error": message}
        if isinstance(candidates, list):
            out["candidates"] = candidates
        sys.stdout.write(json.dumps(out) + "\n")
    else:
        typer.echo(f"error: {message}", err=True)
    return code
