"""JSON action mode: one JSON object per reply, for models without native tool calls.

A reply is either ``{"type": "tool_call", "tool": NAME, "args": {...}}`` or
``{"type": "final", "text": "..."}``. ``action_schema`` builds the JSON schema a constrained
decoder (llama.cpp grammars, ``response_format``) enforces; ``action_guide`` is the short
prompt text; ``parse_action`` turns a reply into a ``ModelTurn``; ``render_history`` turns
native tool exchanges into plain, deterministic text messages.
"""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from protoagent.models.declarations import declared_schema, short_description
from protoagent.models.tool_arguments import MAX_ARGUMENT_CHARS, bounded_arguments, rejected_arguments
from protoagent.models.types import Message, ModelRequest, ModelTurn, Role, ToolCall, ToolSchema

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_TOOL_NAME = re.compile(r'"tool"\s*:\s*"([A-Za-z0-9_.-]{1,64})"')
_MAX_OBJECT_STARTS = 64
"""How many ``{`` positions a reply is tried at, so a reply of braces cannot take quadratic time."""
_DESCRIPTION_LIMIT = 160


def action_schema(tools: Sequence[ToolSchema]) -> dict[str, Any]:
    """A JSON schema that accepts exactly one tool call (per tool, exact args) or a final answer.

    Each tool's own ``$defs`` are hoisted to the root under ``<tool>__<name>`` so that its
    ``$ref`` pointers still resolve once the schema is nested under ``args``.
    """
    defs: dict[str, Any] = {}
    variants: list[dict[str, Any]] = [_tool_variant(tool, defs) for tool in tools]
    variants.append(
        {
            "type": "object",
            "properties": {"type": {"const": "final"}, "text": {"type": "string"}},
            "required": ["type", "text"],
            "additionalProperties": False,
        }
    )
    schema: dict[str, Any] = {"anyOf": variants}
    if defs:
        schema["$defs"] = defs
    return schema


def _tool_variant(tool: ToolSchema, defs: dict[str, Any]) -> dict[str, Any]:
    args = copy.deepcopy(tool.parameters) or {"type": "object", "properties": {}}
    local_defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        local_defs.update(args.pop(key, None) or {})
    renames = {name: f"{tool.name}__{name}" for name in local_defs}
    for name, sub_schema in local_defs.items():
        defs[renames[name]] = _rewrite_refs(sub_schema, renames)
    return {
        "type": "object",
        "properties": {
            "type": {"const": "tool_call"},
            "tool": {"const": tool.name},
            "args": _rewrite_refs(args, renames),
        },
        "required": ["type", "tool", "args"],
        "additionalProperties": False,
    }


def _rewrite_refs(node: Any, renames: Mapping[str, str]) -> Any:
    if isinstance(node, dict):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                out[key] = _renamed_ref(value, renames)
            else:
                out[key] = _rewrite_refs(value, renames)
        return out
    if isinstance(node, list):
        return [_rewrite_refs(item, renames) for item in node]
    return node


def _renamed_ref(ref: str, renames: Mapping[str, str]) -> str:
    for prefix in ("#/$defs/", "#/definitions/"):
        if ref.startswith(prefix):
            name = ref[len(prefix) :]
            return f"#/$defs/{renames.get(name, name)}"
    return ref


def action_guide(tools: Sequence[ToolSchema]) -> str:
    """The prompt text that explains the action format and lists each tool's input schema."""
    lines = [
        "Reply with exactly one JSON object and nothing else.",
        'To call a tool: {"type": "tool_call", "tool": "<tool name>", "args": {<arguments>}}',
        'To finish with an answer: {"type": "final", "text": "<answer>"}',
    ]
    if tools:
        lines.append("Tools (name: description; args JSON schema):")
        for tool in tools:
            schema = json.dumps(declared_schema(tool.parameters), ensure_ascii=False, separators=(",", ":"))
            lines.append(f"- {tool.name}: {short_description(tool.description, _DESCRIPTION_LIMIT)}")
            lines.append(f"  args: {schema}")
    else:
        lines.append("No tools are available; reply with a final answer.")
    return "\n".join(lines)


def parse_action(text: str, tools: Sequence[ToolSchema]) -> ModelTurn:
    """Read one action from a reply; prose and code fences around it are tolerated.

    A reply without a recognisable action becomes a final turn carrying the reply text, so
    an unconstrained model that just answered in prose still ends its turn cleanly.
    """
    known = {tool.name for tool in tools}
    for candidate in _json_objects(text):
        turn = _action_turn(candidate, known)
        if turn is not None:
            return turn
    return ModelTurn(text=text.strip())


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every JSON object in the text: the whole text, fenced blocks, then any ``{`` that parses."""
    if len(text) > MAX_ARGUMENT_CHARS:
        yield _oversized_action(text)
        return
    stripped = text.strip()
    sources = [stripped, *(match.group(1).strip() for match in _FENCE.finditer(text))]
    decoder = json.JSONDecoder(strict=False)
    for source in sources:
        try:
            value = json.loads(source, strict=False)
        except (ValueError, RecursionError):
            # A reply nested deeper than the parser's limit is just not an action.
            continue
        if isinstance(value, dict):
            yield value
    starts = [index for index, char in enumerate(text) if char == "{"][:_MAX_OBJECT_STARTS]
    for index in starts:
        try:
            value, _ = decoder.raw_decode(text, index)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            yield value


def _oversized_action(text: str) -> dict[str, Any]:
    """A reply too big to be one usable action: a call whose arguments carry only the reason."""
    name = _TOOL_NAME.search(text[:4096])
    problem = f"the reply is {len(text)} characters, over the {MAX_ARGUMENT_CHARS}-character limit for one action"
    tool = name.group(1) if name else "unknown"
    return {"type": "tool_call", "tool": tool, "args": rejected_arguments(problem, text)}


def _action_turn(obj: Mapping[str, Any], known: set[str]) -> ModelTurn | None:
    kind = obj.get("type")
    if kind == "final" and isinstance(obj.get("text"), str):
        return ModelTurn(text=obj["text"])
    name = obj.get("tool")
    if kind in known and not isinstance(name, str):
        # Small models sometimes put the tool name where the action type belongs.
        name = kind
        kind = "tool_call"
    args = obj.get("args", obj.get("arguments", {}))
    if kind in ("tool_call", None) and isinstance(name, str) and name and isinstance(args, dict):
        call = ToolCall(id=new_call_id(), name=name, arguments=bounded_arguments(dict(args)))
        return ModelTurn(tool_calls=(call,), stop_reason="tool_calls")
    return None


def new_call_id() -> str:
    """A fresh tool-call id for actions the model wrote as text."""
    return f"call_{uuid.uuid4().hex[:24]}"


def action_text(call: ToolCall) -> str:
    """The canonical JSON text of one tool-call action (argument order kept as recorded)."""
    action = {"type": "tool_call", "tool": call.name, "args": call.arguments}
    return json.dumps(action, ensure_ascii=False)


def render_history(messages: Sequence[Message]) -> list[Message]:
    """Native tool exchanges as plain user/assistant text, the same way on every request.

    Assistant tool calls become their JSON action text; tool results become user messages
    naming the tool. Consecutive messages of one role are merged, since many chat templates
    require roles to alternate. The output depends only on the input, so prompt prefixes
    stay identical from one request to the next.
    """
    names: dict[str, str] = {}
    rendered: list[tuple[Role, str]] = []
    for message in messages:
        if message.role == "assistant":
            parts = [message.content] if message.content else []
            for call in message.tool_calls:
                names[call.id] = call.name
                parts.append(action_text(call))
            rendered.append(("assistant", "\n".join(parts)))
        elif message.role == "tool":
            name = message.name or names.get(message.tool_call_id or "", "tool")
            rendered.append(("user", f"Result of tool {name!r}:\n{message.content}"))
        else:
            rendered.append((message.role, message.content))
    merged: list[Message] = []
    for role, content in rendered:
        if merged and merged[-1].role == role:
            merged[-1] = Message(role=role, content=f"{merged[-1].content}\n\n{content}")
        else:
            merged.append(Message(role=role, content=content))
    return merged


def wants_structured_output(request: ModelRequest) -> bool:
    """A JSON-mode request with its own ``output_schema`` (a classifier, a resolver): the reply is
    that JSON object, not an action, so no action guide or action schema applies."""
    return request.action_mode == "json" and request.output_schema is not None


def json_mode_system(system: str, tools: Sequence[ToolSchema], *, tools_in_prompt: bool = False) -> str:
    """The system text of a JSON-mode request: the caller's instructions, then the action guide
    (unless the caller's text already holds it)."""
    if tools_in_prompt:
        return system
    guide = action_guide(tools)
    return f"{system.rstrip()}\n\n{guide}" if system.strip() else guide


_FINAL_OPENING = re.compile(r'\s*(?:```(?:json|JSON)?\s*)?\{\s*"type"\s*:\s*"final"\s*,\s*"text"\s*:\s*"')


class FinalTextStream:
    """Streams the answer of a ``final`` action while its JSON is still arriving.

    ``feed`` takes raw reply text and returns the newly decoded part of the ``text`` field
    (empty while the reply is not, or not yet known to be, a final action). Concatenated,
    the pieces equal the final ``text`` that ``parse_action`` returns for the same reply.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._position: int | None = None
        self._closed = False
        self._shown: list[str] = []

    def feed(self, chunk: str) -> str:
        self._buffer += chunk
        if self._closed:
            return ""
        if self._position is None:
            opening = _FINAL_OPENING.match(self._buffer)
            if opening is None:
                return ""
            self._position = opening.end()
        end = self._safe_end(self._position)
        piece = self._buffer[self._position : end]
        self._position = end
        text = str(json.loads(f'"{piece}"', strict=False)) if piece else ""
        self._shown.append(text)
        return text

    def rest(self, turn: ModelTurn) -> str:
        """The part of a final answer not streamed yet (all of it when the reply was not JSON)."""
        shown = "".join(self._shown)
        if turn.tool_calls or not turn.text.startswith(shown):
            return ""
        return turn.text[len(shown) :]

    def _safe_end(self, index: int) -> int:
        """The end of the longest run from ``index`` that decodes on its own (no split escapes)."""
        buffer = self._buffer
        while index < len(buffer):
            char = buffer[index]
            if char == '"':
                self._closed = True
                return index
            if char != "\\":
                index += 1
                continue
            size = self._escape_size(index)
            if size == 0 or index + size > len(buffer):
                return index
            index += size
        return index

    def _escape_size(self, index: int) -> int:
        buffer = self._buffer
        if index + 1 >= len(buffer):
            return 0
        if buffer[index + 1] != "u":
            return 2
        code = buffer[index + 2 : index + 6]
        if len(code) < 4:
            return 0
        # A high surrogate must travel with its low half, or the piece would not decode.
        return 12 if code[:2].lower() == "d8" or code[:2].lower() in ("d9", "da", "db") else 6
