"""``serve``: the token, the roots, the store, and uvicorn.

Every request needs the token, on loopback too (another local user can reach 127.0.0.1). It
comes from ``--token-file PATH`` or ``PROTOAGENT_TOKEN``, never from the command line, which
every local user can read in ``/proc/PID/cmdline``; without either, a fresh one is generated at
start and printed as the URL to open, as Jupyter does.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from pathlib import Path

from protoagent.errors import ConfigError
from protoagent.interfaces.web.requests import WebConfig
from protoagent.settings import TOKEN_ENV, environment

MIN_TOKEN_CHARS = 16
MAX_TOKEN_FILE_BYTES = 4096


def server_token(token_file: Path | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The token from ``token_file``, else ``PROTOAGENT_TOKEN``, else a new random one."""
    token = environment(environ).token
    if token_file is not None:
        try:
            with open(token_file, "rb") as handle:
                raw = handle.read(MAX_TOKEN_FILE_BYTES + 1)
        except OSError as exc:
            raise ConfigError(
                f"--token-file {str(token_file)!r} cannot be read ({exc.strerror}); give a readable file"
            ) from None
        if len(raw) > MAX_TOKEN_FILE_BYTES:
            raise ConfigError(f"--token-file {str(token_file)!r} is not a token (over {MAX_TOKEN_FILE_BYTES} bytes)")
        return checked_token(raw.decode("utf-8", "replace").strip(), f"--token-file {str(token_file)!r}")
    if token:
        return checked_token(token.strip(), TOKEN_ENV)
    return secrets.token_urlsafe(32)


def checked_token(token: str, where: str) -> str:
    if len(token) < MIN_TOKEN_CHARS or not token.isascii() or any(c.isspace() or not c.isprintable() for c in token):
        raise ConfigError(
            f"{where}: a token is at least {MIN_TOKEN_CHARS} printable ASCII characters without spaces; "
            "make one with 'openssl rand -hex 16'"
        )
    return token


def web_config(
    host: str,
    token: str | None,
    roots: Sequence[Path],
    data_home: Path | None = None,
    options: dict[str, bool] | None = None,
) -> WebConfig:
    """Validate the serve options: a token always (a new one when none is given); roots must be folders."""
    resolved = []
    for root in roots or (Path.cwd(),):
        path = Path(root).expanduser().resolve()
        if not path.is_dir():
            raise ConfigError(f"--root {str(root)!r} is not a directory; give an existing folder")
        resolved.append(path)
    return WebConfig(
        roots=tuple(resolved),
        token=checked_token(token, "token") if token else secrets.token_urlsafe(32),
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
