"""``protoagent serve``: the web UI on FastAPI + uvicorn."""

from __future__ import annotations

from pathlib import Path

import typer

from protoagent.api import data_home
from protoagent.errors import ConfigError
from protoagent.interfaces.web.server import serve, server_token, web_config
from protoagent.settings import OPTIONAL_AGENTS, TOKEN_ENV, agent_enabled

TOKEN_ON_COMMAND_LINE = (
    "--token puts the token in the process list, where every local user can read it; "
    f"set {TOKEN_ENV} or pass --token-file PATH (or give neither and open the URL printed at start)"
)


def serve_command(
    host: str, port: int, token_file: Path | None, roots: list[Path], token_argument: str | None = None
) -> int:
    """Check the binding, print where to open the page (token included), and serve until interrupted."""
    if token_argument is not None:
        typer.echo(f"error: {TOKEN_ON_COMMAND_LINE}", err=True)
        return 2
    home = data_home()
    try:
        options = {name: agent_enabled(home, name) for name in OPTIONAL_AGENTS}
        config = web_config(host, server_token(token_file), roots, home, options)
    except ConfigError as exc:
        typer.echo(f"error: {exc}", err=True)
        return 2
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/?token={config.token}"
    typer.echo(f"ProtoAgent web UI: {url}  (runs allowed in: {', '.join(str(r) for r in config.roots)})", err=True)
    serve(config, port)
    return 0
