"""Real session logs and small real tools for the context tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from protoagent.events import Event, MemoryStore, SessionLog, derive_messages, new_session_id
from protoagent.models.types import ModelRequest
from protoagent.tools.base import Observation, Prepared, Tool, ToolContext, ToolMetadata, ToolOutput
from protoagent.tools.recall import RecallTool


class ReadArgs(BaseModel):
    path: str = Field(title="Path", description="Path relative to the workspace root.")
    start_line: int = Field(1, ge=1, title="Start Line", description="First line (1-based).")


class _TextTool(Tool[ReadArgs]):
    description = "Return some text."
    input_model = ReadArgs

    def prepare(self, args: ReadArgs, ctx: ToolContext) -> Prepared:
        return Prepared(preview=args.path, effect="read", state=args.path)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(str(prepared.state))


def text_tool(name: str, observation: Observation) -> Tool[ReadArgs]:
    """A real tool class with the given name and declared observation handling."""
    attributes = {"name": name, "metadata": ToolMetadata(observation=observation)}
    cls = type(name.title().replace("_", ""), (_TextTool,), attributes)
    tool: Tool[ReadArgs] = cls()
    return tool


class BigReadTool(_TextTool):
    """A read tool whose result is a large deterministic text for the path it is given."""

    name = "read_file"
    metadata = ToolMetadata(observation="revision_aware")

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        data = {"path": str(prepared.state), "revision": "ab" * 32, "start_line": 1, "end_line": 60}
        return ToolOutput(big(str(prepared.state)), data=data)


TOOLS: list[Tool[Any]] = [
    text_tool("read_file", "revision_aware"),
    text_tool("search_regex", "projectable"),
    text_tool("check_status", "exact"),
    text_tool("skill", "projectable"),
    text_tool("view_image", "projectable"),
]
METADATA = {tool.name: tool.metadata for tool in TOOLS}
SYSTEM = "You are ProtoAgent, a careful coding agent."


class Conversation:
    """Appends real events to a real session log, as the agent loop and tool pipeline would."""

    def __init__(self, agent: str = "main") -> None:
        self.log = SessionLog(MemoryStore(), new_session_id())
        self.agent = agent
        self.calls = 0
        created = {"preset": "test", "model": "scripted:x", "root": "/", "approval_policy": "auto"}
        self.log.append("session.created", created)

    def user(self, text: str) -> None:
        self.log.append("user.message", {"text": text}, agent=self.agent)

    def batch(self, *results: tuple[str, str], text: str = "", **ended: Any) -> list[str]:
        """One assistant message calling each ``(tool, output)`` and their ``tool.ended`` events."""
        ids = []
        calls = []
        for tool, _ in results:
            self.calls += 1
            ids.append(f"call_{self.calls}")
            calls.append({"id": ids[-1], "name": tool, "arguments": {"path": f"f{self.calls}.py"}})
        self.log.append("model.completed", {"text": text, "tool_calls": calls}, agent=self.agent)
        for call_id, (tool, output) in zip(ids, results, strict=True):
            payload = {"call_id": call_id, "tool": tool, "status": "ok", "output": output, **ended}
            self.log.append("tool.ended", payload, agent=self.agent)
        return ids

    def turn(self) -> None:
        """A new turn of the agent (a new assignment, the Architect's next turn)."""
        self.log.append("turn.started", {}, agent=self.agent)

    def read(self, path: str, output: str, revision: str, start: int = 1, end: int = 40) -> str:
        """One ``read_file`` batch whose event records what a real read records."""
        data = {"path": path, "revision": revision, "start_line": start, "end_line": end}
        return self.batch(("read_file", output), data=data)[0]

    def edit(self, path: str, revision: str, agent: str = "coder") -> None:
        """Another agent's successful edit of ``path``, leaving it at ``revision``."""
        payload = {"call_id": f"edit_{revision}", "tool": "edit_file", "status": "ok", "output": "edited"}
        payload["data"] = {"path": path, "source_revision": revision}
        self.log.append("tool.ended", payload, agent=agent)

    def answer(self, text: str) -> None:
        self.log.append("model.completed", {"text": text}, agent=self.agent)

    @property
    def events(self) -> list[Event]:
        return self.log.events

    def request(
        self, action_mode: str = "native", max_output_tokens: int | None = None, recall: bool = True
    ) -> ModelRequest:
        """The agent's request; ``recall`` offers the recall tool, as a run with projection does."""
        tools = [*TOOLS, RecallTool()] if recall else TOOLS
        return ModelRequest(
            system=SYSTEM,
            messages=tuple(derive_messages(self.events, self.agent)),
            tools=tuple(tool.schema() for tool in tools),
            action_mode="json" if action_mode == "json" else "native",
            agent_role=self.agent,
            max_output_tokens=max_output_tokens,
        )


def big(label: str, size: int = 3000) -> str:
    """A deterministic oversized tool output that starts and ends recognisably."""
    head, tail = f"BEGIN {label}\n", f"\nEND {label}"
    filler = "".join(f"{label} line {i}\n" for i in range(size))
    return head + filler[: size - len(head) - len(tail)] + tail


def contents(request: ModelRequest) -> list[str]:
    return [m.content for m in request.messages]


def tool_contents(request: ModelRequest) -> dict[str, str]:
    return {m.tool_call_id: m.content for m in request.messages if m.tool_call_id is not None}


def payloads(events: Sequence[Event]) -> list[dict[str, Any]]:
    return [dict(e.payload) for e in events]
