"""``serve``: check how the server is bound, open the store and run uvicorn."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from pathlib import Path

from protoagent.errors import ConfigError
from protoagent.interfaces.web.auth import is_loopback
from protoagent.interfaces.web.requests import WebConfig


def web_config(
    host: str,
    token: str | None,
    roots: Sequence[Path],
    data_home: Path | None = None,
    options: dict[str, bool] | None = None,
) -> WebConfig:
    """Validate the serve options: off loopback a token is required; roots must be folders."""
    if not is_loopback(host) and not token:
        suggestion = secrets.token_urlsafe(24)
        raise ConfigError(
            f"refusing to listen on {host!r} without a token: anyone who reaches it could run commands; "
            f"add --token {suggestion} (or bind to 127.0.0.1)"
        )
    resolved = []
    for root in roots or (Path.cwd(),):
        path = Path(root).expanduser().resolve()
        if not path.is_dir():
            raise ConfigError(f"--root {str(root)!r} is not a directory; give an existing folder")
        resolved.append(path)
    return WebConfig(
        roots=tuple(resolved),
        token=token or None,
        host=host,
        data_home=data_home,
        artifacts_root=data_home / "artifacts" if data_home is not None else None,
        options=options or {},
    )


def serve(config: WebConfig, port: int, store_location: str | None = None) -> None:
    """Run the server until interrupted; runs still in progress are cancelled and recorded."""
    import uvicorn

    from protoagent.api import open_store
    from protoagent.interfaces.web.routes import create_app

    with open_store(config.data_home, store_location) as store:
        app = create_app(config, store)
        # Open event streams would hold a shutdown forever; they get a few seconds to close.
        settings = uvicorn.Config(app, host=config.host, port=port, log_level="warning", timeout_graceful_shutdown=3)
        uvicorn.Server(settings).run()
