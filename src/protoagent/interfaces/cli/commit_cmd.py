"""``protoagent commit SESSION``: commit the session's files after approval."""

from __future__ import annotations

import asyncio
import json

import typer

from protoagent.errors import ConfigError, SessionLoadError
from protoagent.tools.approvals import Policy

EXIT_REFUSED = 1


def commit_command(session_id: str, policy: Policy, as_json: bool) -> int:
    from rich.console import Console

    from protoagent.api import open_store
    from protoagent.interfaces.cli.render import terminal_answerer
    from protoagent.tools.approvals import ApprovalService
    from protoagent.workflow.commit import commit_session

    console = Console(stderr=True)
    answerer = terminal_answerer(console) if policy == "ask" and not as_json else None
    with open_store() as store:
        try:
            result = asyncio.run(commit_session(store, session_id, ApprovalService(policy, answerer)))
        except (ConfigError, SessionLoadError) as exc:
            if as_json:
                typer.echo(json.dumps({"status": "error", "error": str(exc)}))
            else:
                typer.echo(f"error: {exc}", err=True)
            return EXIT_REFUSED
    plan = result.plan
    if as_json:
        out = {"status": "committed", "commit": result.commit, "paths": list(plan.paths), "message": plan.message}
        typer.echo(json.dumps({**out, "verified_by": list(plan.verified_by)}))
    else:
        typer.echo(f"committed {result.commit[:12]}: {', '.join(plan.paths)}")
    return 0
