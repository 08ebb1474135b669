"""The MCP prompts an editor may run as slash commands, listed from the servers themselves.

Listing a server's prompts needs the server running, so only servers that may start without
asking are started for it: the person's own (their data home's ``mcp.json``) and repository
servers the person trusted as they are declared now (``mcp_trust``), confined as a run would
confine them. Any other repository server is never started here; it is named as unlisted, and
``/mcp:SERVER:PROMPT`` asks before it starts, as a tool call would. Each server is listed once
per identity (what it runs, as trust pins it); one that changed, or was trusted since, is listed
again. What a server answers is untrusted: names and descriptions are bounded before they reach
the editor.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protoagent.errors import ProtoAgentError
from protoagent.integrations.mcp_broker import MAX_LIST_PAGES, MCPBroker, MCPFailure
from protoagent.integrations.mcp_prompts import parse_prompt_command
from protoagent.integrations.mcp_trust import TrustStore
from protoagent.processes.sandbox import select_sandbox

if TYPE_CHECKING:
    from mcp import ClientSession

MAX_PROMPTS = 100
"""Prompts taken from one server; more are left out of the editor's list (they still run)."""
MAX_NAME = 80
MAX_DESCRIPTION = 200


@dataclass(frozen=True, slots=True)
class ServerPrompt:
    """One prompt of one server: what the editor shows for ``/mcp:SERVER:PROMPT``."""

    server: str
    name: str
    description: str
    arguments: tuple[tuple[str, bool], ...] = ()
    """``(name, required)`` in the server's order; the first may be given as free text."""


@dataclass(frozen=True, slots=True)
class PromptListing:
    """The listed prompts, and the servers whose prompts are not listed with the reason."""

    prompts: tuple[ServerPrompt, ...] = ()
    unlisted: tuple[tuple[str, str], ...] = ()


PENDING = "its prompts are being listed"
UNTRUSTED = "a repository server: it starts only once you approve it"


def pending_listing(root: Path, home: Path | None) -> PromptListing:
    """Before anything is listed: every configured server, its prompts not known yet."""
    try:
        names = sorted(_broker(root, home).servers)
    except ProtoAgentError:
        return PromptListing()
    return PromptListing(unlisted=tuple((name, PENDING) for name in names))


class PromptLister:
    """Lists the prompts of a repository's startable servers, remembering each server's answer
    for as long as its identity stays the same."""

    def __init__(self, root: Path, home: Path | None) -> None:
        self.root = root.resolve()
        self.home = home
        self._known: dict[str, tuple[tuple[ServerPrompt, ...], str]] = {}
        """Identity key -> (prompts, failure); a failure is listed as unlisted with its reason."""

    async def listing(self) -> PromptListing:
        """The prompts now: servers not seen as they are declared now are started and asked."""
        try:
            broker = _broker(self.root, self.home)
        except ProtoAgentError:
            return PromptListing()
        try:
            names = sorted(broker.servers)
            startable = [name for name in names if broker.server_trusted(name)]
            keys = {name: TrustStore.key(self.root, broker.server(name)) for name in startable}
            missing = [name for name in startable if keys[name] is None or keys[name] not in self._known]
            answers = await asyncio.gather(*(_list(broker, name) for name in missing))
            fresh = dict(zip(missing, answers, strict=True))
            for name, answer in fresh.items():
                key = keys[name]
                if key is not None:
                    self._known[key] = answer
        finally:
            await broker.aclose()
        prompts: list[ServerPrompt] = []
        unlisted: list[tuple[str, str]] = []
        for name in names:
            key = keys.get(name)
            if name not in keys:
                unlisted.append((name, UNTRUSTED))
                continue
            found, failure = fresh[name] if name in fresh else self._known[str(key)]
            prompts += found
            if failure:
                unlisted.append((name, failure))
        return PromptListing(tuple(prompts), tuple(unlisted))


def _broker(root: Path, home: Path | None) -> MCPBroker:
    """The servers as a run of this session would start them: in the sandbox its commands get."""
    return MCPBroker.from_files(root, home, sandbox=select_sandbox("auto", data_home=home))


async def _list(broker: MCPBroker, server: str) -> tuple[tuple[ServerPrompt, ...], str]:
    """The server's prompts, or none and why (a server without prompts has none)."""

    async def action(session: ClientSession) -> list[Any]:
        from mcp.types import PaginatedRequestParams

        capabilities = session.server_capabilities
        if capabilities is not None and capabilities.prompts is None:
            return []
        found: list[Any] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            page = await session.list_prompts(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            found += page.prompts
            cursor = page.next_cursor
            if not cursor or len(found) >= MAX_PROMPTS:
                break
        return found

    try:
        found = await broker.run(server, action)
    except MCPFailure as failure:
        return (), "its prompts could not be listed: " + _line(str(failure), MAX_DESCRIPTION)
    except ProtoAgentError as exc:
        return (), _line(str(exc), MAX_DESCRIPTION)
    return tuple(p for p in (listed_prompt(server, item) for item in found[:MAX_PROMPTS]) if p is not None), ""


def listed_prompt(server: str, item: Any) -> ServerPrompt | None:
    """The editor's view of one listed prompt; ``None`` for a name no command line can call."""
    name = str(item.name)
    if len(name) > MAX_NAME or parse_prompt_command(f"/mcp:{server}:{name}") != (server, name, ""):
        return None
    arguments = tuple((_line(str(a.name), MAX_NAME), bool(a.required)) for a in item.arguments or ())
    return ServerPrompt(server, name, _line(str(item.description or ""), MAX_DESCRIPTION), arguments)


def _line(text: str, limit: int) -> str:
    """The first line of ``text``, printable only, at most ``limit`` characters."""
    first = text.strip().splitlines()[0] if text.strip() else ""
    shown = "".join(c for c in first if c.isprintable())
    return shown if len(shown) <= limit else shown[: limit - 1] + "…"
