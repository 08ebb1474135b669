"""``protoagent serve`` as a person starts it: a real process on loopback, and its token."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from .support import free_port


@contextmanager
def serve(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None, host: str = "127.0.0.1"
) -> Iterator[tuple[int, str]]:
    """``protoagent serve`` on a free port; yields the port and the line it printed at start."""
    port = free_port(host)
    environ = {k: v for k, v in os.environ.items() if k != "PROTOAGENT_TOKEN"}
    environ |= {"PROTOAGENT_HOME": str(tmp_path / "home"), **(env or {})}
    command = [sys.executable, "-m", "protoagent", "serve", "--port", str(port), "--root", str(tmp_path), *args]
    server = subprocess.Popen(command, env=environ, stderr=subprocess.PIPE, text=True)
    assert server.stderr is not None
    try:
        line = server.stderr.readline()
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"http://{host}:{port}/", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, f"serve did not start: {line}"
                time.sleep(0.1)
        yield port, line
    finally:
        server.send_signal(signal.SIGINT)
        _, rest = server.communicate(timeout=20)
        assert "Traceback" not in rest


def test_serve_listens_on_loopback_and_prints_the_url_with_a_fresh_token(tmp_path: Path) -> None:
    with serve(tmp_path) as (port, line):
        found = re.search(rf"http://127\.0\.0\.1:{port}/\?token=([A-Za-z0-9_-]{{40,}})", line)
        assert found is not None and str(tmp_path) in line, line
        token = found.group(1)
        anonymous = httpx.get(f"http://127.0.0.1:{port}/api/sessions")
        assert anonymous.status_code == 401, "loopback is no boundary between local users"
        headers = {"Authorization": f"Bearer {token}"}
        response = httpx.get(f"http://127.0.0.1:{port}/api/sessions", headers=headers)
        assert response.status_code == 200 and response.json() == []
        with httpx.Client() as browser:
            page = browser.get(f"http://127.0.0.1:{port}/?token={token}", follow_redirects=True)
            assert page.status_code == 200 and "<title>ProtoAgent</title>" in page.text


def test_serve_on_another_loopback_address_prints_it_and_answers_there(tmp_path: Path) -> None:
    with serve(tmp_path, "--host", "127.0.0.2", host="127.0.0.2") as (port, line):
        found = re.search(rf"http://127\.0\.0\.2:{port}/\?token=([A-Za-z0-9_-]{{40,}})", line)
        assert found is not None, line
        headers = {"Authorization": f"Bearer {found.group(1)}"}
        response = httpx.get(f"http://127.0.0.2:{port}/api/sessions", headers=headers)
        assert response.status_code == 200 and response.json() == []
        with httpx.Client() as browser:
            page = browser.get(f"http://127.0.0.2:{port}/?token={found.group(1)}", follow_redirects=True)
            assert page.status_code == 200 and "<title>ProtoAgent</title>" in page.text


def test_the_token_comes_from_the_environment_or_a_file_never_the_command_line(tmp_path: Path) -> None:
    chosen = "env-token-0123456789abcdef"
    with serve(tmp_path, env={"PROTOAGENT_TOKEN": chosen}) as (port, line):
        assert f"?token={chosen}" in line
        ok = httpx.get(f"http://127.0.0.1:{port}/api/sessions", headers={"Authorization": f"Bearer {chosen}"})
        assert ok.status_code == 200
    token_file = tmp_path / "token"
    token_file.write_text("file-token-0123456789abcdef\n")
    token_file.chmod(0o600)
    with serve(tmp_path, "--token-file", str(token_file)) as (port, _):
        headers = {"Authorization": "Bearer file-token-0123456789abcdef"}
        assert httpx.get(f"http://127.0.0.1:{port}/api/sessions", headers=headers).status_code == 200
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    for args, expected in (
        (["--token", "visible-in-proc-cmdline-123456"], "process list"),
        (["--token-file", str(tmp_path / "missing")], "cannot be read"),
    ):
        refused = subprocess.run(
            [sys.executable, "-m", "protoagent", "serve", "--port", "1", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert refused.returncode == 2 and expected in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
