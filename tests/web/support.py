"""A real uvicorn server on a free loopback port, in a thread, over a real SQLite store."""

from __future__ import annotations

import secrets
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from protoagent.events.sqlite_store import SQLiteStore
from protoagent.interfaces.web.hub import RunHub
from protoagent.interfaces.web.routes import create_app
from protoagent.interfaces.web.server import web_config
from protoagent.testing import make_repo
from protoagent.testing.repos import write_script

BUGGY = "def parse_date(text):\n    year, month, day = text.split('-')\n    return int(year), int(day), int(month)\n"
FIXED = BUGGY.replace("int(day), int(month)", "int(month), int(day)")
TESTS = (
    "import unittest\n\nfrom dates import parse_date\n\n\nclass T(unittest.TestCase):\n"
    "    def test_parse(self):\n        self.assertEqual(parse_date('2024-03-15'), (2024, 3, 15))\n"
)


@dataclass
class Server:
    url: str
    store: SQLiteStore
    hub: RunHub
    root: Path
    token: str

    def client(self, token: str | None = None) -> httpx.Client:
        """A client sending the server's token (or ``token``; ``""`` sends none)."""
        sent = self.token if token is None else token
        headers = {"Authorization": f"Bearer {sent}"} if sent else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30)

    @property
    def login_url(self) -> str:
        """The URL ``serve`` prints: opening it sets the token cookie in a browser."""
        return f"{self.url}/?token={self.token}"


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def running_server(
    root: Path,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    store_path: Path | None = None,
    mcp: bool = False,
) -> Iterator[Server]:
    """Serve ``root`` (the one allowed root) until the block ends; the token is a new one unless given."""
    store = SQLiteStore(store_path or root / ".home" / "sessions.sqlite")
    options = {"tester": False, "mcp": mcp}
    config = web_config(host, token or secrets.token_urlsafe(24), [root], root / ".home", options)
    hub = RunHub()
    port = free_port(host if host != "0.0.0.0" else "127.0.0.1")
    app = create_app(config, store, hub)
    settings = uvicorn.Config(app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=2)
    server = uvicorn.Server(settings)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the web server did not start")
        time.sleep(0.02)
    try:
        shown = host if host != "0.0.0.0" else "127.0.0.1"
        yield Server(f"http://{shown}:{port}", store, hub, root, config.token)
    finally:
        server.should_exit = True
        thread.join(15)
        store.close()


def date_repo(root: Path) -> Path:
    return make_repo(root / "repo", {"dates.py": BUGGY, "test_dates.py": TESTS})


def fix_script(path: Path) -> Path:
    """Architect hands the fix to the Coder, who edits dates.py; the checks then verify it."""
    import hashlib

    revision = hashlib.sha256(BUGGY.encode()).hexdigest()
    old = "    return int(year), int(day), int(month)\n"
    new = "    return int(year), int(month), int(day)\n"
    return write_script(
        path,
        [
            {"role": "architect", "tool_calls": [{"name": "coder", "arguments": {"task": "fix dates.py"}}]},
            {
                "role": "coder",
                "tool_calls": [
                    {
                        "name": "edit_file",
                        "arguments": {"path": "dates.py", "old": old, "new": new, "expected_revision": revision},
                    }
                ],
            },
            {
                "role": "coder",
                "tool_calls": [{"name": "report_task", "arguments": {"status": "done", "summary": "fixed"}}],
            },
            {"role": "coder", "text": "fixed"},
            {"role": "architect", "text": "Fixed parse_date; the check passes."},
        ],
    )
