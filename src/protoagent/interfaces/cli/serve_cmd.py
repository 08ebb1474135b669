"""``protoagent serve``: the web UI on FastAPI + uvicorn."""

from __future__ import annotations

from pathlib import Path

import typer

from protoagent.api import data_home
from protoagent.errors import ConfigError
from protoagent.interfaces.web.server import serve, web_config
from protoagent.settings import OPTIONAL_AGENTS, agent_enabled


def serve_command(host: str, port: int, token: str | None, roots: list[Path]) -> int:
    """Check the binding, print where to open the page, and serve until interrupted."""
    home = data_home()
    try:
        options = {name: agent_enabled(home, name) for name in OPTIONAL_AGENTS}
        config = web_config(host, token, roots, home, options)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 2
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/" + (f"?token={config.token}" if config.token else "")
    typer.echo(f"ProtoAgent web UI: {url}  (runs allowed in: {', '.join(str(r) for r in config.roots)})", err=True)
    serve(config, port)
    return 0
