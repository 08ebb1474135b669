"""``protoagent serve`` as a person starts it: a real process on loopback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from .support import free_port


def test_serve_listens_on_loopback_and_prints_where_to_open_the_page(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    command = [sys.executable, "-m", "protoagent", "serve", "--port", str(port), "--root", str(tmp_path)]
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/api/sessions", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, "serve did not start"
                time.sleep(0.1)
        assert response.status_code == 200 and response.json() == []
        page = httpx.get(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200 and "<title>ProtoAgent</title>" in page.text
    finally:
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=20)
    assert f"http://127.0.0.1:{port}/" in err and str(tmp_path) in err
    assert "Traceback" not in err
