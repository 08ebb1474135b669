"""A command's usage failure: one line naming the fix (or a JSON error with ``--json``), exit 2."""

from __future__ import annotations

import json
from typing import NoReturn

import typer

EXIT_USAGE = 2


def fail(message: str, as_json: bool = False) -> NoReturn:
    """End the command: ``error: MESSAGE`` on stderr, or ``{"status": "error", ...}`` on stdout."""
    if as_json:
        typer.echo(json.dumps({"status": "error", "error": message}))
    else:
        typer.echo(f"error: {message}", err=True)
    raise typer.Exit(EXIT_USAGE)
