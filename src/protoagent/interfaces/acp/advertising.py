"""Keeping the editor's list of a session's slash commands true (``available_commands_update``).

The first list goes out once the editor knows the session; after that the commands are worked
out again in the background whenever they may have changed (the session's MCP servers listed
their prompts, a prompt ended: a server may have been trusted, a skill added) and a list that
differs from the one the editor has is sent again."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from acp.schema import AvailableCommandsUpdate

from protoagent.interfaces.acp.commands import available_commands
from protoagent.interfaces.acp.prompt_listing import PromptLister, pending_listing
from protoagent.interfaces.acp.updates import Update


class CommandAdvertiser:
    """One session's slash commands: what the editor was last told, and the refresh that may
    change it. With MCP off there are no MCP prompt commands and no server is started."""

    def __init__(self, queue: asyncio.Queue[Update], repo: Path, home: Path, mcp: bool) -> None:
        self.queue = queue
        self.repo = repo
        self.home = home
        self.lister = PromptLister(repo, home) if mcp else None
        self._latest = available_commands(repo, home, pending_listing(repo, home) if mcp else None)
        self._sent: AvailableCommandsUpdate | None = None
        self._open = False
        self._again = False
        self._task: asyncio.Task[None] | None = None

    def open(self) -> None:
        """The editor knows the session now: queue the commands, unless it has them already."""
        self._open = True
        self._send()

    def refresh(self) -> None:
        """Work the commands out again in the background (a refresh asked for while one runs
        runs once more after it); a changed list is queued."""
        self._again = True
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._refresh())

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _refresh(self) -> None:
        while self._again:
            self._again = False
            try:
                listing = await self.lister.listing() if self.lister is not None else None
                self._latest = await asyncio.to_thread(available_commands, self.repo, self.home, listing)
            except Exception as exc:  # a broken skill or server must not take the session down
                logging.getLogger(__name__).warning("slash commands not refreshed: %s", exc)
                continue
            self._send()

    def _send(self) -> None:
        if self._open and self._latest != self._sent:
            self._sent = self._latest
            self.queue.put_nowait(self._latest)
