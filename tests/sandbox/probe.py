"""Escape probes run as an untrusted command: each reports what it managed to do."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
from collections.abc import Callable

HARNESS = b"-m\0protoagent\0run\0"
CANARY = b"PROTOAGENT_TEST_CANARY="


def write_outside(outside: str) -> str:
    with open(os.path.join(outside, "escape"), "w") as handle:
        handle.write("escaped")
    return "wrote"


def write_git() -> str:
    with open(".git/escape", "w") as handle:
        handle.write("escaped")
    return "wrote"


def read_environ() -> int:
    hits = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                hits += CANARY in handle.read()
        except OSError:
            continue
    return hits


def connect(port: int) -> str:
    socket.create_connection(("127.0.0.1", port), timeout=2).close()
    return "connected"


def signal_harness() -> int:
    sent = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                if HARNESS not in handle.read():
                    continue
            os.kill(int(pid), signal.SIGCONT)
        except OSError:
            continue
        sent += 1
    return sent


def detach(marker: str) -> str:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(30)", marker])
        os._exit(0)
    os.wait()
    return "started"


def main() -> None:
    outside, port, marker = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    probes: dict[str, Callable[[], object]] = {
        "write_outside": lambda: write_outside(outside),
        "write_git": write_git,
        "read_environ": read_environ,
        "network": lambda: connect(port),
        "signal_harness": signal_harness,
        "detach": lambda: detach(marker),
    }
    result: dict[str, object] = {}
    for name, probe in probes.items():
        try:
            result[name] = probe()
        except Exception as error:  # every refusal is a result, not a crash
            result[name] = f"refused: {type(error).__name__}"
    print("PROBE " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
