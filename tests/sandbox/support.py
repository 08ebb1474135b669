"""Helpers for the sandbox tests: the CLI under each sandbox mode, host-side process scans."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from protoagent.processes.landlock_exec import MIN_ABI, abi_version

EXE = [sys.executable, "-m", "protoagent"]
CANARY_NAME = "PROTOAGENT_TEST_CANARY"
MODES = ("bwrap", "landlock", "none", "off")
"""What is available: bubblewrap, Landlock only, nothing (``auto`` asks), or ``--sandbox off``."""


def mode_env(tmp_path: Path, mode: str) -> dict[str, str]:
    """The harness environment for ``mode``: bubblewrap hidden from PATH and Landlock held back
    through ``PROTOAGENT_SANDBOX_BACKENDS`` where the mode has no sandbox."""
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}
    if mode in ("landlock", "none"):
        env["PATH"] = os.path.dirname(sys.executable)  # a PATH without bwrap
    if mode == "none":
        env["PROTOAGENT_SANDBOX_BACKENDS"] = "bwrap"
    return env


def skip_reason(mode: str) -> str | None:
    if mode == "bwrap" and shutil.which("bwrap") is None:
        return "bubblewrap is not installed (scripts/system-deps installs it)"
    if mode == "landlock" and abi_version() < MIN_ABI:
        return f"this kernel has no Landlock ABI >= {MIN_ABI}"
    return None


def run_args(mode: str) -> list[str]:
    return ["--sandbox", "off"] if mode == "off" else ["--sandbox", "auto"]


def marked_processes(marker: str) -> list[int]:
    """Host pids whose command line contains ``marker`` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry.name))
    return found


def kill_marked(marker: str) -> None:
    """Clean up after a failing test so no probe outlives it."""
    for pid in marked_processes(marker):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            continue


@contextmanager
def counting_server() -> Iterator[tuple[int, list[int]]]:
    """A TCP server on loopback that counts the connections it accepts."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    accepted: list[int] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except (TimeoutError, OSError):
                continue
            accepted.append(1)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        stop.set()
        thread.join(2)
        server.close()


def cli(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, *args], env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL
    )
