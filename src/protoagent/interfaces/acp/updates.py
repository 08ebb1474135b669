"""Session events as ACP ``session/update`` payloads: the same fold for live runs and replays."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
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
    AvailableCommandsUpdate,
    FileEditToolCallContent,
    PlanEntry,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    ToolKind,
    UserMessageChunk,
)

from protoagent.agents.profiles import LEADS
from protoagent.events.catalog import (
    ApprovalDecided,
    ApprovalRequested,
    ModelDelta,
    ModelFailed,
    ModelRetrying,
    RunEnded,
    SessionCreated,
    SessionResumed,
    ToolEnded,
    ToolStarted,
    UserMessage,
    WorkerStarted,
    WorkflowPhase,
)
from protoagent.events.types import Event

Update = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
)

MAIN_AGENTS = LEADS
"""Agents whose words are the reply; workers' words are shown as thoughts."""
OUTPUT_LIMIT = 4000
IMAGES = ("preimage", "afterimage")
"""A write receipt's file texts (``workspace.images``)."""

_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "edit_file": "edit",
    "create_file": "edit",
    "replace_file": "edit",
    "list_directory": "search",
    "search_regex": "search",
    "code_context": "search",
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

    One translator lives as long as the editor's session, across its prompts (and a replay), so
    tool call ids stay unique in the session: a call id a later run repeats gets a suffix.
    Locations and diff paths are absolute (the schema says so), resolved against the session's
    root. The plan is the current run's workflow: each phase and each worker assignment is an
    entry; the newest is in progress and earlier ones are completed.
    """

    _plan: list[PlanEntry] = field(default_factory=list)
    _root: Path | None = None
    _ids: dict[tuple[str, str], str] = field(default_factory=dict)
    """(agent, call id) of the log → the ACP tool call id of its latest call."""
    _used: set[str] = field(default_factory=set)
    _diffs: dict[str, FileEditToolCallContent] = field(default_factory=dict)
    """An edit's diff, by ACP tool call id, kept for its completion."""

    def tool_call_id(self, agent: str, call_id: str) -> str:
        """The ACP id of the log's call ``call_id`` by ``agent`` (its latest start)."""
        return self._ids.get((agent, call_id), call_id)

    def absolute(self, path: str) -> str:
        """``path`` as the editor needs it: absolute, against the session's root."""
        if self._root is None or Path(path).is_absolute():
            return path
        return str(self._root / path)

    def translate(self, event: Event) -> list[Update]:
        main = event.agent in MAIN_AGENTS
        match event.typed_payload():
            case SessionCreated() | SessionResumed() as head:
                self._plan = []  # each run has its own plan
                if isinstance(head, SessionCreated) and head.root:
                    self._root = Path(head.root)
                return []
            case UserMessage(text=text) if main:
                return [update_user_message_text(text)]
            case ModelDelta(text=text):
                return [update_agent_message_text(text) if main else update_agent_thought_text(text)]
            case ModelRetrying(delay_s=delay, error=error):
                return [update_agent_thought_text(f"\nretrying in {delay:.1f}s: {error}\n")]
            case ModelFailed(error=error):
                return [update_agent_thought_text(f"\nmodel failed: {error}\n")]
            case ToolStarted() as started:
                return [self._started(event.agent, started)]
            case ApprovalDecided(decision=decision, call_id=call_id):
                # A denial reaches the editor with the call's end.
                done = decision != "allow"
                return [] if done else [update_tool_call(self.tool_call_id(event.agent, call_id), status="in_progress")]
            case ApprovalRequested() as asked:
                return [self._requested(self.tool_call_id(event.agent, asked.call_id), asked)]
            case ToolEnded() as ended:
                return [self._ended(self.tool_call_id(event.agent, ended.call_id), ended)]
            case WorkflowPhase(phase=phase):
                return [self._advance(f"phase: {phase}")]
            case WorkerStarted(role=role, task=task):
                return [self._advance(f"{role}: {task}"[:200])]
            case RunEnded(status=status) if status != "cancelled" and self._plan:
                return [self._advance(None)]
            case _:
                return []

    def _requested(self, acp_id: str, asked: ApprovalRequested) -> ToolCallProgress:
        if asked.effect == "write" and asked.paths:
            self._diffs[acp_id] = diff_content(self.absolute(asked.paths[0]), asked.preview)
            return update_tool_call(acp_id, content=[self._diffs[acp_id]])
        return update_tool_call(acp_id, content=[tool_content(text_block(asked.preview))])

    def _ended(self, acp_id: str, ended: ToolEnded) -> ToolCallProgress:
        output = ended.output[:OUTPUT_LIMIT]
        content: list[Any] = [tool_content(text_block(output))] if output else []
        data = dict(ended.data)
        diff = self._diffs.pop(acp_id, None)
        if ended.status == "ok" and "afterimage" in data and isinstance(data.get("path"), str):
            # The receipt's own texts: the whole file before and after, exactly as written.
            before = data.get("preimage")
            diff = tool_diff_content(self.absolute(data["path"]), str(data["afterimage"]), before and str(before))
        if diff is not None and ended.status == "ok":
            content.insert(0, diff)  # the change stays on screen beside its receipt
        for image in IMAGES:
            data.pop(image, None)  # the diff carries them; raw output stays small
        return update_tool_call(
            acp_id,
            status=_STATUS.get(ended.status, "failed"),
            content=content or None,
            raw_output={"status": ended.status, "data": data},
        )

    def _started(self, agent: str, started: ToolStarted) -> ToolCallStart:
        arguments = dict(started.arguments)
        acp_id = self._new_id(agent, started.call_id)
        path = arguments.get("path")
        where = self.absolute(path) if isinstance(path, str) else None
        presentation = started.presentation
        diff = _argument_diff(started.tool, where, arguments) if presentation == "diff" else None
        if diff is not None:
            self._diffs[acp_id] = diff
        return start_tool_call(
            acp_id,
            _title(started.tool, arguments),
            kind=tool_kind(started.tool, presentation),
            status="pending",
            content=[diff] if diff is not None else None,
            locations=[ToolCallLocation(path=where)] if where is not None else None,
            raw_input=arguments,
        )

    def _new_id(self, agent: str, call_id: str) -> str:
        acp_id, n = call_id, 1
        while acp_id in self._used:
            n += 1
            acp_id = f"{call_id}-{n}"
        self._used.add(acp_id)
        self._ids[(agent, call_id)] = acp_id
        return acp_id

    def _advance(self, content: str | None) -> AgentPlanUpdate:
        self._plan = [plan_entry(e.content, priority=e.priority, status="completed") for e in self._plan]
        if content is not None:
            self._plan.append(plan_entry(content, status="in_progress"))
        return update_plan(self._plan)


def _argument_diff(tool: str, path: str | None, arguments: dict[str, Any]) -> FileEditToolCallContent | None:
    """A write's diff from its arguments, until (or without) an approval's exact preview."""
    if path is None:
        return None
    if tool == "edit_file":
        edits = arguments.get("edits")
        pairs: list[Any] = edits if isinstance(edits, list) else [arguments]
        olds = [str(pair.get("old", "")) for pair in pairs if isinstance(pair, dict)]
        news = [str(pair.get("new", "")) for pair in pairs if isinstance(pair, dict)]
        return tool_diff_content(path, "\n".join(news), "\n".join(olds)) if olds else None
    if isinstance(arguments.get("content"), str):
        return tool_diff_content(path, str(arguments["content"]), None if tool == "create_file" else "")
    return None
