"""MCP resources and prompts: the ``mcp_resources`` and ``mcp_prompts`` tools, and the
``/mcp:<server>:<prompt> [arguments]`` command that expands into an objective or chat message.

Resources and prompts are read from the server (started as ``list_mcp_tools`` would start it);
what they hold is untrusted evidence. Prompt arguments are ``name=value`` pairs; free text
without ``=`` fills the prompt's first argument.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field

from protoagent.errors import ConfigError
from protoagent.integrations.mcp_broker import MCPBroker, MCPFailure
from protoagent.integrations.mcp_calls import failure_output
from protoagent.integrations.mcp_tools import broker_of, listing_prepared
from protoagent.integrations.untrusted import clip, untrusted_header
from protoagent.processes.command import CommandSandbox
from protoagent.tools.approvals import Answerer, ApprovalRequest, ApprovalService, Policy
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput

if TYPE_CHECKING:
    from mcp import ClientSession

PROMPT_COMMAND = re.compile(r"^\s*/mcp:([A-Za-z0-9][A-Za-z0-9_.-]*):([^\s]+)(?:\s+(.*))?$", re.DOTALL)
MAX_CHARS = 24_000


class McpResourcesInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="Name of a configured MCP server.")
    uri: str = Field(default="", description="A resource URI to read; empty lists the server's resources.")


class McpPromptsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str = Field(description="Name of a configured MCP server.")
    name: str = Field(default="", description="A prompt to get; empty lists the server's prompts.")
    arguments: dict[str, str] = Field(default_factory=dict, description="The prompt's arguments.")


async def list_resources(session: ClientSession) -> str:
    result = await session.list_resources()
    lines = [f"- {r.uri} ({r.name}){': ' + r.description if r.description else ''}" for r in result.resources]
    return f"{len(lines)} resources:\n" + "\n".join(lines)


async def read_resource(session: ClientSession, uri: str) -> str:
    from mcp.types import TextResourceContents

    result = await session.read_resource(uri)
    parts = [
        c.text if isinstance(c, TextResourceContents) else f"[binary {c.mime_type or 'content'} at {c.uri}, not shown]"
        for c in result.contents
    ]
    return "\n".join(parts)


async def list_prompts(session: ClientSession) -> str:
    result = await session.list_prompts()
    lines = []
    for p in result.prompts:
        args = ", ".join(f"{a.name}{'' if a.required else '?'}" for a in p.arguments or [])
        lines.append(f"- {p.name}({args}){': ' + p.description if p.description else ''}")
    return f"{len(lines)} prompts:\n" + "\n".join(lines)


async def get_prompt(session: ClientSession, name: str, arguments: dict[str, str]) -> str:
    from mcp.types import EmbeddedResource, TextContent, TextResourceContents

    result = await session.get_prompt(name, arguments or None)
    parts = []
    for message in result.messages:
        block: Any = message.content
        if isinstance(block, TextContent):
            parts.append(block.text)
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            parts.append(block.resource.text)
        else:
            parts.append(f"[{getattr(block, 'type', 'content')} not shown]")
    return "\n\n".join(parts)


class McpResourcesTool(Tool[McpResourcesInput]):
    name = "mcp_resources"
    description = "List an MCP server's resources, or read one by URI (untrusted external content)."
    metadata = ToolMetadata(effect="execute", observation="exact")

    def prepare(self, args: McpResourcesInput, ctx: ToolContext) -> Prepared:
        purpose = f"read resource {args.uri!r}" if args.uri else "list its resources"
        prepared: Prepared[Any] = listing_prepared(broker_of(ctx), args.server, purpose)
        return replace(prepared, state=(prepared.state, args.uri))

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        plan, uri = prepared.state
        operation = (lambda s: read_resource(s, uri)) if uri else list_resources
        return await _listing_output(ctx, plan, f" resource {uri!r}" if uri else "", operation)


class McpPromptsTool(Tool[McpPromptsInput]):
    name = "mcp_prompts"
    description = "List an MCP server's prompts, or get one with its arguments (untrusted external content)."
    metadata = ToolMetadata(effect="execute", observation="exact")

    def prepare(self, args: McpPromptsInput, ctx: ToolContext) -> Prepared:
        purpose = f"get prompt {args.name!r}" if args.name else "list its prompts"
        prepared: Prepared[Any] = listing_prepared(broker_of(ctx), args.server, purpose)
        return replace(prepared, state=(prepared.state, args.name, args.arguments))

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        plan, name, arguments = prepared.state
        operation = (lambda s: get_prompt(s, name, arguments)) if name else list_prompts
        return await _listing_output(ctx, plan, f" prompt {name!r}" if name else "", operation)


async def _listing_output(
    ctx: ToolContext, plan: Any, what: str, operation: Callable[[Any], Awaitable[str]]
) -> ToolOutput:
    """Run one resources/prompts operation on the plan's server and wrap its text as evidence."""
    broker = broker_of(ctx)
    if plan.start_untrusted:
        broker.remember_trust(plan.server)
    try:
        text = await broker.run(plan.server, operation)
    except MCPFailure as failure:
        return failure_output(failure, plan)
    body, cut = clip(text, MAX_CHARS)
    header = untrusted_header(f"MCP server {plan.server!r}{what}")
    return ToolOutput(f"{header}\n{body}" + ("\n[truncated]" if cut else ""), data={"server": plan.server})


def parse_prompt_command(text: str) -> tuple[str, str, str] | None:
    """``(server, prompt, rest)`` of a ``/mcp:<server>:<prompt> rest`` line, else ``None``."""
    match = PROMPT_COMMAND.match(text)
    return (match.group(1), match.group(2), (match.group(3) or "").strip()) if match else None


def prompt_arguments(rest: str, first: str | None) -> dict[str, str]:
    """``name=value`` words; other text fills the first argument."""
    try:
        words = shlex.split(rest)
    except ValueError as exc:
        raise ConfigError(f"cannot read the prompt arguments ({exc}); quote values with spaces") from None
    pairs = dict(w.split("=", 1) for w in words if "=" in w)
    free = " ".join(w for w in words if "=" not in w)
    if free:
        if first is None:
            raise ConfigError("this prompt takes no arguments; remove the text after the prompt name")
        pairs.setdefault(first, free)
    return pairs


async def expand_prompt_command(
    text: str,
    root: Path,
    home: Path | None,
    *,
    policy: Policy = "deny",
    answerer: Answerer | None = None,
    sandbox: CommandSandbox | None = None,
) -> str:
    """The text with a leading ``/mcp:<server>:<prompt> ...`` replaced by the prompt's messages;
    any other text is returned as it is. Starting a repository server the person has not trusted
    asks the same question a tool call would, under the run's ``policy`` and ``answerer``; with
    nobody to answer, or under ``deny``, it is refused."""
    parsed = parse_prompt_command(text)
    if parsed is None:
        return text
    server, name, rest = parsed
    broker = MCPBroker.from_files(root, home, sandbox=sandbox)
    try:
        broker.server(server)
    except Exception as exc:
        raise ConfigError(str(exc)) from None
    try:
        await _approve_start(broker, server, f"get prompt {name!r}", ApprovalService(policy, answerer))
        found = await broker.run(server, lambda s: s.list_prompts())
        prompt = next((p for p in found.prompts if p.name == name), None)
        if prompt is None:
            names = ", ".join(p.name for p in found.prompts) or "(none)"
            raise ConfigError(f"MCP server {server!r} has no prompt {name!r}; its prompts are: {names}")
        first = prompt.arguments[0].name if prompt.arguments else None
        expanded: str = await broker.run(server, lambda s: get_prompt(s, name, prompt_arguments(rest, first)))
    except MCPFailure as failure:
        raise ConfigError(str(failure).splitlines()[0]) from None
    finally:
        await broker.aclose()
    return expanded


async def _approve_start(broker: MCPBroker, server: str, purpose: str, approvals: ApprovalService) -> None:
    """Ask before an untrusted repository server starts; raises ``ConfigError`` when refused."""
    prepared = listing_prepared(broker, server, purpose)
    if not prepared.state.start_untrusted:
        return
    request = ApprovalRequest(
        call_id=f"mcp_prompt_{server}",
        tool=McpPromptsTool.name,
        effect=prepared.effect,
        preview=prepared.preview,
        inside_workspace=False,
        external=prepared.external,
    )
    decision = await approvals.decide(request)
    if not decision.allow:
        raise ConfigError(f"MCP server {server!r} was not started: {decision.reason}")
    broker.remember_trust(server)


MCP_RESOURCE_TOOLS: tuple[type[Tool[Any]], ...] = (McpResourcesTool, McpPromptsTool)
