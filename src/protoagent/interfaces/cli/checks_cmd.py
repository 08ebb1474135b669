"""``protoagent checks [--repo DIR] [--json]``: show the checks a run would capture, executing nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from protoagent.checks.report import checks_report, render_checks_text
from protoagent.errors import ConfigError

EXIT_OK = 0
EXIT_CONFIG_ERROR = 1
EXIT_USAGE = 2


def checks_command(repo: Path, as_json: bool) -> int:
    """Print the check plan of ``repo`` (text or JSON) and return the process exit code.

    0: printed; 1: ``.protoagent/project.json`` is malformed (the message names the fix);
    2: ``repo`` is not a directory.
    """
    from rich.console import Console

    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if not repo.is_dir():
        err.print(f"error: {str(repo)!r} is not a directory; pass an existing repository with --repo", markup=False)
        return EXIT_USAGE
    try:
        report = checks_report(repo)
    except ConfigError as error:
        err.print(f"error: {error}", markup=False)
        return EXIT_CONFIG_ERROR
    if as_json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
    else:
        out.print(render_checks_text(report), markup=False)
    return EXIT_OK
