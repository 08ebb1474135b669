"""Which repository-declared MCP servers the person has trusted, kept in the data home.

A repository's server is untrusted until the person approves starting it once; the answer is
remembered in ``<data home>/mcp-trust.json`` for that repository and that server identity:
its transport, command and arguments, environment, headers, working directory and URL as the
file writes them, and the content of every file inside the repository that the command names
(``python server.py``, ``./run.sh``, ``-m pkg``). Anything changed, the server script rewritten
from the sandbox included, asks again. The same file holds, per repository and server, the
variables of the person's environment that the repository's file may expand (``allow-env``);
only the person writes it. Writes are atomic (a temporary file replaced under a lock).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from filelock import FileLock

from protoagent.integrations.mcp_config import MCPServerSpec
from protoagent.integrations.mcp_files import write_json

TRUST_FILE = "mcp-trust.json"
MAX_PINNED_FILES = 2000
MAX_PINNED_BYTES = 32 * 1024 * 1024
"""A folder the command names is pinned file by file up to these bounds; past them it cannot
be pinned, and the server is asked for at every start."""


class Unpinnable(Exception):
    """What the server runs is too large to pin: trust cannot be remembered for it."""


def server_identity(spec: MCPServerSpec, root: Path) -> str:
    """A digest of what the server runs or reaches, as written, and of the repository files its
    command names; raises ``Unpinnable`` when those are too large to read."""
    what = {
        "transport": spec.transport,
        "written": spec.as_written.fingerprint(),
        "cwd": spec.cwd,
        "files": pinned_files(spec, root) if spec.transport == "stdio" else {},
    }
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:32]


def pinned_files(spec: MCPServerSpec, root: Path) -> dict[str, str]:
    """``{repository path: content digest}`` for each argv entry that names a file or folder in
    the repository (relative to the server's cwd), ``-m module`` included."""
    base = root.resolve()
    cwd = (base / spec.cwd).resolve() if spec.cwd else base
    found: dict[str, str] = {}
    budget = [MAX_PINNED_FILES, MAX_PINNED_BYTES]
    for candidate in _candidates(spec.command):
        path = (cwd / candidate).resolve() if not os.path.isabs(candidate) else Path(candidate).resolve()
        if path == base or not path.is_relative_to(base) or not path.exists():
            continue
        found[str(path.relative_to(base))] = _digest(path, budget)
    return found


def _candidates(argv: tuple[str, ...]) -> list[str]:
    names: list[str] = []
    for index, arg in enumerate(argv):
        value = arg.partition("=")[2] if arg.startswith("-") and "=" in arg else arg
        if value and not value.startswith("-"):
            names.append(value)
        if index > 0 and argv[index - 1] == "-m":
            module = arg.replace(".", "/")
            names += [module, module + ".py"]
    return names


def _digest(path: Path, budget: list[int]) -> str:
    digest = hashlib.sha256()
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    for file in files:
        budget[0] -= 1
        try:
            data = file.read_bytes() if budget[0] >= 0 and file.stat().st_size <= budget[1] else None
        except OSError:
            data = b"\0unreadable"
        if data is None:
            raise Unpinnable(f"{path} holds more than {MAX_PINNED_FILES} files or {MAX_PINNED_BYTES} bytes")
        budget[1] -= len(data)
        digest.update(str(file.relative_to(path) if file != path else "").encode() + b"\0")
        digest.update(hashlib.sha256(data).digest())
    return digest.hexdigest()


class TrustStore:
    """Trusted (repository, server name, identity) triples, and the variables the person lets a
    repository's server expand."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / TRUST_FILE if home is not None else None

    @staticmethod
    def key(root: Path, spec: MCPServerSpec) -> str | None:
        """The trust key, or ``None`` when the server cannot be pinned (asked for every time)."""
        try:
            return f"{root.resolve()}\0{spec.name}\0{server_identity(spec, root)}"
        except Unpinnable:
            return None

    def trusted(self, root: Path, spec: MCPServerSpec) -> bool:
        """The person's own servers are trusted; a repository's only once trusted here, as it is now."""
        if spec.trusted:
            return True
        key = self.key(root, spec)
        return self.path is not None and key is not None and key in self._read().get("trusted", {})

    def trust(self, root: Path, spec: MCPServerSpec) -> None:
        """Remember that the person trusts this repository server as it is declared now."""
        key = self.key(root, spec)
        if self.path is None or spec.trusted or key is None:
            return
        self._update(lambda data: data.setdefault("trusted", {}).__setitem__(key, _record(root, spec.name)))

    def allowed_env(self, root: Path) -> dict[str, list[str]]:
        """Server name -> the variables the person allowed the repository's file to expand."""
        prefix = f"{root.resolve()}\0"
        entries = self._read().get("allow_env", {})
        return {
            key[len(prefix) :]: [str(v) for v in value.get("variables", [])]
            for key, value in entries.items()
            if key.startswith(prefix) and isinstance(value, dict)
        }

    def allow_env(self, root: Path, server: str, variables: list[str]) -> None:
        """Let the repository's server ``server`` expand ``variables`` (an empty list clears)."""
        if self.path is None:
            return
        key = f"{root.resolve()}\0{server}"

        def change(data: dict[str, Any]) -> None:
            entries = data.setdefault("allow_env", {})
            if variables:
                entries[key] = {**_record(root, server), "variables": sorted(set(variables))}
            else:
                entries.pop(key, None)

        self._update(change)

    def _update(self, change: Any) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock"):
            data = self._read()
            change(data)
            write_json(self.path, data)
        os.chmod(self.path, 0o600)

    def _read(self) -> dict[str, Any]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}  # unreadable trust is no trust: the person is asked again
        if not isinstance(data, dict):
            return {}
        return {k: v for k, v in data.items() if k in ("trusted", "allow_env") and isinstance(v, dict)}


def _record(root: Path, server: str) -> dict[str, str]:
    return {"repository": str(root.resolve()), "server": server}
