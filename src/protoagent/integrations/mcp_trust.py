"""Which repository-declared MCP servers the person has trusted, kept in the data home.

A repository's server is untrusted until the person approves starting it once; the answer is
remembered in ``<data home>/mcp-trust.json`` for that repository and that server identity
(its command, environment, working directory or URL), so a changed server asks again.
Writes are atomic (a temporary file replaced under a lock).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from filelock import FileLock

from protoagent.integrations.mcp_config import MCPServerSpec
from protoagent.integrations.mcp_files import write_atomic

TRUST_FILE = "mcp-trust.json"


class TrustStore:
    """Trusted (repository, server name, identity) triples."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / TRUST_FILE if home is not None else None

    @staticmethod
    def key(root: Path, spec: MCPServerSpec) -> str:
        return f"{root.resolve()}\0{spec.name}\0{spec.identity}"

    def trusted(self, root: Path, spec: MCPServerSpec) -> bool:
        """The person's own servers are trusted; a repository's only once trusted here."""
        if spec.trusted:
            return True
        return self.path is not None and self.key(root, spec) in self._read().get("trusted", {})

    def trust(self, root: Path, spec: MCPServerSpec) -> None:
        """Remember that the person trusts this repository server as it is declared now."""
        if self.path is None or spec.trusted:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.path) + ".lock"):
            data = self._read()
            entries = data.setdefault("trusted", {})
            entries[self.key(root, spec)] = {"repository": str(root.resolve()), "server": spec.name}
            write_atomic(self.path, data)

    def _read(self) -> dict[str, Any]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            return {}  # unreadable trust is no trust: the person is asked again
        return data if isinstance(data, dict) and isinstance(data.get("trusted", {}), dict) else {}
