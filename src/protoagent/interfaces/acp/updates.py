"""Session events as ACP ``session/update`` payloads: the same fold for live runs and replays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    FileEditToolCallContent,
    PlanEntry,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    UserMessageChunk,
)

from protoagent.events.types import Event

Update = UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress | AgentPlanUpdate

MAIN_AGENTS = frozenset({"architect", "main"})
"""Agents whose words are the reply; workers' words are shown as thoughts."""
OUTPUT_LIMIT = 4000

_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "edit_file": "edit",
    "create_file": "edit",
    "replace_file": "edit",
    "list_directory": "search",
    "search_regex": "search",
    "execute_command": "execute",
    "shell": "execute",
    "process": "execute",
    "run_check": "execute",
    "web_search": "fetch",
    "fetch_url": "fetch",
    "coder": "think",
    "tester": "think",
}
_STATUS: dict[str, ToolCallStatus] = {"ok": "completed", "error": "failed", "denied": "failed", "rejected": "failed"}


def tool_kind(tool: str, presentation: str = "generic") -> ToolKind:
    """ACP's kind for one of our tools: by name, else by presentation."""
    if tool in _KINDS:
        return _KINDS[tool]
    return {"diff": "edit", "terminal": "execute"}.get(presentation, "other")  # type: ignore[return-value]


def diff_content(path: str, preview: str) -> FileEditToolCallContent:
    """ACP diff content from a unified diff preview: the old and new text of its hunks."""
    old: list[str] = []
    new: list[str] = []
    created = False
    for line in preview.splitlines(keepends=True):
        if line.startswith("--- "):
            created = line.strip() == "--- /dev/null"
        elif line.startswith(("+++ ", "@@", "\\")):
            continue
        elif line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        elif line.startswith(" "):
            old.append(line[1:])
            new.append(line[1:])
    return tool_diff_content(path, "".join(new), None if created else "".join(old))


def _title(tool: str, arguments: dict[str, Any]) -> str:
    if "path" in arguments:
        return f"{tool} {arguments['path']}"
    if isinstance(arguments.get("argv"), list):
        return f"{tool}: {' '.join(str(a) for a in arguments['argv'])}"[:200]
    if "command" in arguments:
        return f"{tool}: {arguments['command']}"[:200]
    if "task" in arguments:
        return f"{tool}: {arguments['task']}"[:200]
    return tool


@dataclass(slots=True)
class UpdateTranslator:
    """Folds one session's events, in order, into ACP updates.

    The plan is the run's workflow: each phase and each worker assignment is an entry; the
    newest is in progress and earlier ones are completed.
    """

    _plan: list[PlanEntry] = field(default_factory=list)

    def translate(self, event: Event) -> list[Update]:
        p = event.payload
        match event.type:
            case "user.message" if event.agent in MAIN_AGENTS:
                return [update_user_message_text(str(p["text"]))]
            case "model.delta" if event.agent in MAIN_AGENTS:
                return [update_agent_message_text(str(p["text"]))]
            case "model.delta":
                return [update_agent_thought_text(str(p["text"]))]
            case "tool.started":
                return [self._started(p)]
            case "approval.requested" if p["effect"] == "write" and p.get("paths"):
                content = [diff_content(str(p["paths"][0]), str(p["preview"]))]
                return [update_tool_call(str(p["call_id"]), content=content)]
            case "approval.requested":
                return [update_tool_call(str(p["call_id"]), content=[tool_content(text_block(str(p["preview"])))])]
            case "approval.decided" if p["decision"] == "allow":
                return [update_tool_call(str(p["call_id"]), status="in_progress")]
            case "tool.ended":
                output = str(p["output"])[:OUTPUT_LIMIT]
                return [
                    update_tool_call(
                        str(p["call_id"]),
                        status=_STATUS.get(str(p["status"]), "failed"),
                        content=[tool_content(text_block(output))] if output else None,
                        raw_output={"status": p["status"], "data": p.get("data", {})},
                    )
                ]
            case "workflow.phase":
                return [self._advance(f"phase: {p['phase']}")]
            case "worker.started":
                return [self._advance(f"{p['role']}: {p.get('task', '')}"[:200])]
            case "run.ended" if p["status"] != "cancelled" and self._plan:
                return [self._advance(None)]
            case _:
                return []

    def _started(self, p: dict[str, Any]) -> ToolCallStart:
        arguments = dict(p.get("arguments") or {})
        path = arguments.get("path")
        locations = [ToolCallLocation(path=str(path))] if isinstance(path, str) else None
        return start_tool_call(
            str(p["call_id"]),
            _title(str(p["tool"]), arguments),
            kind=tool_kind(str(p["tool"]), str(p.get("presentation", "generic"))),
            status="pending",
            locations=locations,
            raw_input=arguments,
        )

    def _advance(self, content: str | None) -> AgentPlanUpdate:
        self._plan = [plan_entry(e.content, priority=e.priority, status="completed") for e in self._plan]
        if content is not None:
            self._plan.append(plan_entry(content, status="in_progress"))
        return update_plan(self._plan)
