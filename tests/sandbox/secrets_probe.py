"""Read, reach and tamper probes run as an untrusted command: each reports what it managed to do.

Usage: ``secrets_probe.py JSON`` where JSON maps ``read`` (name → file), ``connect`` (name →
socket path), ``write`` (name → file to create, folders made as needed) and ``chmod`` (name →
file made world-writable)."""

from __future__ import annotations

import json
import os
import socket
import sys


def read(path: str) -> str:
    with open(path, encoding="utf-8") as handle:
        return handle.read().strip()


def connect(path: str) -> str:
    client = socket.socket(socket.AF_UNIX)
    client.settimeout(2)
    client.connect(path)
    client.close()
    return "connected"


def write(path: str) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("planted by the probe\n")
    return "wrote"


def chmod(path: str) -> str:
    os.chmod(path, 0o777)
    return "changed"


def main() -> None:
    plan = json.loads(sys.argv[1])
    actions = {"read": read, "connect": connect, "write": write, "chmod": chmod}
    result: dict[str, str] = {}
    for kind, targets in plan.items():
        for name, path in targets.items():
            try:
                result[name] = actions[kind](path)
            except Exception as error:  # every refusal is a result, not a crash
                result[name] = f"refused: {type(error).__name__}"
    print("PROBE " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
