"""A real ACP client (the package's client side) driving ``protoagent acp`` over stdio."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    InitializeResponse,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from protoagent.testing import make_repo, write_script

BUGGY = "def parse_date(text):\n    year, month, day = text.split('-')\n    return int(year), int(day), int(month)\n"
FIXED = BUGGY.replace("int(day), int(month)", "int(month), int(day)")
TESTS = (
    "import unittest\n\nfrom dates import parse_date\n\n\nclass T(unittest.TestCase):\n"
    "    def test_parse(self):\n        self.assertEqual(parse_date('2024-03-15'), (2024, 3, 15))\n"
)


@dataclass
class RecordingClient:
    """Records every update and answers each permission request with ``choice``."""

    choice: str = "allow-once"
    initialized: InitializeResponse | None = None
    """The agent's answer to ``initialize``."""
    updates: list[tuple[str, Any]] = field(default_factory=list)
    permissions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **_: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=self.choice))

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, update))

    def kinds(self) -> list[str]:
        return [str(u.session_update) for _, u in self.updates]

    def of(self, kind: str) -> list[Any]:
        return [u for _, u in self.updates if u.session_update == kind]

    def on_connect(self, conn: Any) -> None:
        pass


@asynccontextmanager
async def acp_agent(
    home: Path, script: Path, client: RecordingClient, *extra: str
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process]]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    args = ("-m", "protoagent", "acp", "--model", f"scripted:{script}", *extra)
    async with spawn_agent_process(client, sys.executable, *args, env=env) as (conn, process):
        client.initialized = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
        yield conn, process


def date_repo(root: Path) -> Path:
    return make_repo(root / "repo", {"dates.py": BUGGY, "test_dates.py": TESTS})


def edit_script(path: Path) -> Path:
    """The Architect hands the fix to the Coder, who edits dates.py."""
    revision = hashlib.sha256(BUGGY.encode()).hexdigest()
    old = "    return int(year), int(day), int(month)\n"
    new = "    return int(year), int(month), int(day)\n"
    done = {"status": "done", "summary": "ok"}
    edit = {"path": "dates.py", "old": old, "new": new, "expected_revision": revision}
    return write_script(
        path,
        [
            {"role": "architect", "tool_calls": [{"name": "coder", "arguments": {"task": "fix dates.py"}}]},
            {"role": "coder", "tool_calls": [{"name": "edit_file", "arguments": edit}]},
            {"role": "coder", "tool_calls": [{"name": "report_task", "arguments": done}]},
            {"role": "coder", "text": "fixed"},
            {"role": "architect", "text": "Fixed parse_date."},
        ],
    )
