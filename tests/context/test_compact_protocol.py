"""The compact small-profile protocol: short prompt, declared input schemas, cards once, native kept."""

from __future__ import annotations

import json
from enum import StrEnum

from pydantic import BaseModel, Field

from protoagent.context.tokens import EstimatingCounter, estimate_request, render_prompt, tool_prompt_line
from protoagent.hooks.compact_protocol import JSON_ACTION_GUIDE, CompactProtocolHook, WorkerCard
from protoagent.models.declarations import compact_schema, short_description
from protoagent.models.types import ModelRequest, ToolSchema

from .support import Conversation

LONG = (
    "The path of the file to change, relative to the selected workspace root; absolute paths keep their "
    "spelling and are checked against the root by the workspace layer before anything is read or written."
)
CARDS = (
    WorkerCard("explorer", "question", "reads the repository and answers with evidence"),
    WorkerCard("coder", "task", "applies edits for one focused task"),
    WorkerCard("tester", "checks", "runs discovered checks and reports receipts"),
)


class Mode(StrEnum):
    fast = "fast"
    careful = "careful"


class Span(BaseModel):
    start: int = Field(ge=1, description="First line.")
    end: int = Field(ge=1, description="Last line.")


class EditArgs(BaseModel):
    path: str = Field(description=LONG, examples=["src/app.py"])
    title: str = Field(description="A field that happens to be named title.")
    mode: Mode = Mode.careful
    spans: list[Span] = Field(default_factory=list)


def edit_tool() -> ToolSchema:
    description = "Replace one exact occurrence of old text. " + "It keeps line endings and other source. " * 5
    return ToolSchema("edit_file", description, EditArgs.model_json_schema())


def request(action_mode: str) -> ModelRequest:
    chat = Conversation(agent="coder")
    chat.user("TASK: rename parse() to parse_line()")
    return ModelRequest(
        system="Edit exactly what the task asks; read before you edit.",
        messages=tuple(chat.request().messages),
        tools=(edit_tool(),),
        action_mode="json" if action_mode == "json" else "native",
        agent_role="coder",
    )


HOOK = CompactProtocolHook(identity="You are ProtoAgent's Coder.", cards=CARDS)


def all_keys(node: object) -> list[str]:
    if isinstance(node, dict):
        return [k for k, v in node.items() for k in (k, *all_keys(v))]
    if isinstance(node, list):
        return [k for item in node for k in all_keys(item)]
    return []


def all_descriptions(node: object) -> list[str]:
    if isinstance(node, dict):
        own = [node["description"]] if isinstance(node.get("description"), str) else []
        return own + [d for v in node.values() for d in all_descriptions(v)]
    if isinstance(node, list):
        return [d for item in node for d in all_descriptions(item)]
    return []


def test_compact_protocol_omits_long_descriptions_and_titles() -> None:
    compact = HOOK(request("json"), [])
    (tool,) = compact.tools
    assert len(tool.description) <= 80 and tool.description == "Replace one exact occurrence of old text."
    assert _schema_titles(EditArgs.model_json_schema())  # pydantic adds them ...
    assert not _schema_titles(tool.parameters)  # ... and the compact schema drops them.
    assert "title" in tool.parameters["properties"]  # A property named title is not a title.
    assert "examples" not in all_keys(tool.parameters)
    assert all(len(d) <= 80 for d in all_descriptions(tool.parameters))
    assert LONG not in compact.system and "It keeps line endings" not in compact.system
    assert compact.system.count("edit_file") == 1


def _schema_titles(node: object) -> list[str]:
    """``title`` used as a schema keyword (not as a property name)."""
    if isinstance(node, dict):
        found = [str(node["title"]) for key in ("title",) if isinstance(node.get(key), str)]
        for key, value in node.items():
            if key in ("properties", "$defs"):
                found += [t for sub in value.values() for t in _schema_titles(sub)]
            else:
                found += _schema_titles(value)
        return found
    if isinstance(node, list):
        return [t for item in node for t in _schema_titles(item)]
    return []


def test_compact_schema_keeps_what_a_call_must_know_and_leaves_defaults_and_bounds_to_validation() -> None:
    original = EditArgs.model_json_schema()
    compact = compact_schema(original)
    assert compact["required"] == original["required"] == ["path", "title"]
    assert compact["type"] == "object"
    assert set(compact["properties"]) == {"path", "title", "mode", "spans"}
    assert compact["properties"]["title"] == {
        "description": "A field that happens to be named title.",
        "type": "string",
    }
    assert compact["$defs"]["Mode"]["enum"] == ["fast", "careful"]
    assert compact["$defs"]["Span"]["properties"]["start"] == {"description": "First line.", "type": "integer"}
    assert compact["properties"]["mode"] == {"$ref": "#/$defs/Mode"}
    assert compact["properties"]["spans"]["items"] == {"$ref": "#/$defs/Span"}


def test_short_descriptions_are_bounded_and_deterministic() -> None:
    assert short_description("Short one.") == "Short one."
    assert short_description("First sentence fits. " + "x " * 80) == "First sentence fits."
    cut = short_description("word " * 40)
    assert len(cut) <= 80 and cut.endswith("…") and cut == short_description("word " * 40)


def test_json_mode_prompt_has_guide_identity_instructions_schemas_and_cards() -> None:
    compact = HOOK(request("json"), [])
    system = compact.system
    assert system.startswith("You are ProtoAgent's Coder.\nEdit exactly what the task asks; read before you edit.")
    assert JSON_ACTION_GUIDE in system
    assert '{"type":"tool_call","tool":NAME,"args":{...}}' in system and '{"type":"final","text":"..."}' in system
    assert tool_prompt_line(compact.tools[0]) in system
    assert json.loads(tool_prompt_line(compact.tools[0]))["parameters"]["required"] == ["path", "title"]
    assert "coder(task): applies edits for one focused task" in system


def test_agent_cards_counted_once() -> None:
    for mode in ("json", "native"):
        compact = HOOK(request(mode), [])
        prompt = render_prompt(compact)
        for card in CARDS:
            assert prompt.count(card.line()) == 1
        estimate = estimate_request(compact, EstimatingCounter())
        assert estimate.system == EstimatingCounter().count(compact.system) + 4
        if mode == "json":
            # The schemas already sit in the system text: no second count as declarations.
            assert estimate.tools == 0
            assert prompt.count(tool_prompt_line(compact.tools[0])) == 1


def test_native_mode_keeps_native_tool_declarations() -> None:
    original = request("native")
    compact = HOOK(original, [])
    assert compact.tools == original.tools
    assert "edit_file" not in compact.system and JSON_ACTION_GUIDE not in compact.system
    assert "tool interface" in compact.system
    counter = EstimatingCounter()
    assert estimate_request(compact, counter).tools == estimate_request(original, counter).tools > 0


def test_json_schemas_are_counted_as_prompt_text_when_not_in_the_system() -> None:
    plain = request("json")
    counter = EstimatingCounter()
    estimate = estimate_request(plain, counter)
    assert estimate.tools == counter.count(tool_prompt_line(plain.tools[0]))


def test_given_instructions_replace_the_request_system_text() -> None:
    hook = CompactProtocolHook(identity="You are ProtoAgent's Tester.", instructions="Run checks; report receipts.")
    compact = hook(request("json"), [])
    assert compact.system.startswith("You are ProtoAgent's Tester.\nRun checks; report receipts.\n\n")
    assert "read before you edit" not in compact.system
    assert "Workers:" not in compact.system
    assert hook(request("json"), []) == compact
