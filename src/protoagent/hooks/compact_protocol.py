"""The compact small-profile protocol: a before-model hook that rewrites the system prompt.

The prompt keeps what a small model needs and nothing else (``spec/task-workflow.txt``,
"Compact protocol for the small profile"): the agent identity line, short role instructions,
a short action-format guide, the tools' declared input schemas (``models.declarations``; JSON
mode only, native providers keep their native declarations) and one line per worker card. Long
descriptions are cut to their first sentence. The cards live only in the system text, so
admission counts them once.

It runs after the hooks that add to the system text (skills, workspace instructions; see
``hooks.order``) and keeps their text as the role's instructions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from protoagent.context.tokens import tool_prompt_line
from protoagent.events.types import Event
from protoagent.hooks.order import HookOwner
from protoagent.hooks.pipeline import HookRegistration
from protoagent.models.declarations import SHORT_DESCRIPTION, compact_schema, short_description
from protoagent.models.types import ModelRequest, ToolSchema

COMPACT_PROTOCOL_OWNER: HookOwner = "compact-protocol"
MAX_DESCRIPTION = SHORT_DESCRIPTION

JSON_ACTION_GUIDE = (
    "Reply with exactly one JSON object and nothing else:\n"
    '{"type":"tool_call","tool":NAME,"args":{...}} to call one tool, or\n'
    '{"type":"final","text":"..."} when the work is done.'
)
NATIVE_ACTION_GUIDE = "Call one tool at a time through the tool interface; reply with plain text when the work is done."


@dataclass(frozen=True, slots=True)
class WorkerCard:
    """One worker the agent may delegate to, shown as a single line."""

    name: str
    argument: str
    summary: str

    def line(self) -> str:
        return f"{self.name}({self.argument}): {self.summary}"


def compact_tool(tool: ToolSchema, limit: int = MAX_DESCRIPTION) -> ToolSchema:
    """The tool as the compact protocol shows it: the declared schema, every description short."""
    return ToolSchema(tool.name, short_description(tool.description, limit), compact_schema(tool.parameters, limit))


def render_compact_system(
    identity: str,
    instructions: str,
    action_mode: str,
    tools: Sequence[ToolSchema],
    cards: Sequence[WorkerCard],
) -> str:
    """The compact system text. In JSON mode ``tools`` must already be compact."""
    sections = ["\n".join(part for part in (identity.strip(), instructions.strip()) if part)]
    if action_mode == "json":
        sections.append(JSON_ACTION_GUIDE)
        if tools:
            sections.append("Tools:\n" + "\n".join(tool_prompt_line(t) for t in tools))
    else:
        sections.append(NATIVE_ACTION_GUIDE)
    if cards:
        sections.append("Workers:\n" + "\n".join(card.line() for card in cards))
    return "\n\n".join(section for section in sections if section)


class CompactProtocolHook:
    """Rewrites the system prompt into the compact protocol; see the module docstring.

    ``identity`` is the agent identity line (``You are ProtoAgent's Coder.``); ``instructions``
    are the short role instructions, or ``None`` to keep the request's own system text as them.
    ``cards`` are the worker cards of the agent's team, given as data.
    """

    def __init__(
        self,
        *,
        identity: str,
        instructions: str | None = None,
        cards: Sequence[WorkerCard] = (),
        max_description: int = MAX_DESCRIPTION,
    ) -> None:
        self.identity = identity
        self.instructions = instructions
        self.cards = tuple(cards)
        self.max_description = max_description

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        tools = request.tools
        if request.action_mode == "json":
            # JSON-mode declarations become prompt text, so they are shortened too.
            tools = tuple(compact_tool(t, self.max_description) for t in request.tools)
        instructions = request.system if self.instructions is None else self.instructions
        system = render_compact_system(self.identity, instructions, request.action_mode, tools, self.cards)
        return replace(request, system=system, tools=tools, tools_in_prompt=request.action_mode == "json")

    def registration(self) -> HookRegistration:
        return HookRegistration(COMPACT_PROTOCOL_OWNER, self)
