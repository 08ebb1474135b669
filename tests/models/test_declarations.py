"""One rule for every declared schema: what a call must know is declared, what the validator applies
(defaults, bounds, patterns, unknown-argument refusal) is not; every path a model reads a
declaration from (tool input models, MCP server tools, JSON actions, the compact protocol) uses it."""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from protoagent.hooks.compact_protocol import compact_tool
from protoagent.integrations.mcp_broker import MCPToolInfo
from protoagent.integrations.mcp_native import native_tool
from protoagent.models.declarations import compact_schema, declared_schema, short_description
from protoagent.models.json_actions import action_guide, action_schema
from protoagent.models.types import ToolSchema
from protoagent.tools.base import input_schema


class Pair(BaseModel):
    model_config = ConfigDict(extra="forbid")
    old: str = Field(min_length=1)
    new: str


class Call(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(pattern=r"^\w+$", max_length=40)
    start_line: int = Field(1, ge=1)
    end_line: int | None = Field(None, ge=1)
    mode: Literal["fast", "careful"] = "careful"
    title: str | None = Field(None, description="a property named title, not a title")
    default: list[Pair] = Field(default_factory=list, min_length=0, max_length=8)
    keep: int | None = Field(description="required and nullable: null is a value here")


DECLARED_CALL = {
    "$defs": {
        "Pair": {
            "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
            "required": ["old", "new"],
            "type": "object",
        }
    },
    "properties": {
        "path": {"type": "string"},
        "start_line": {"type": "integer"},
        "end_line": {"type": "integer"},
        "mode": {"enum": ["fast", "careful"], "type": "string"},
        "title": {"description": "a property named title, not a title", "type": "string"},
        "default": {"items": {"$ref": "#/$defs/Pair"}, "type": "array"},
        "keep": {
            "anyOf": [{"type": "integer"}, {"type": "null"}],
            "description": "required and nullable: null is a value here",
        },
    },
    "required": ["path", "keep"],
    "type": "object",
}
"""The pinned declaration: no titles, defaults, bounds, pattern or ``additionalProperties: false``;
an optional nullable property is its type; a required nullable one keeps ``null``."""


def test_a_pydantic_input_model_is_declared_exactly_so() -> None:
    assert declared_schema(Call.model_json_schema()) == DECLARED_CALL
    assert input_schema(Call) == DECLARED_CALL


def test_the_validator_still_applies_what_the_declaration_leaves_out() -> None:
    call = Call.model_validate({"path": "a", "keep": None})
    assert (call.start_line, call.end_line, call.mode, call.default) == (1, None, "careful", [])
    for bad in ({"start_line": 0}, {"path": "a b"}, {"default": [{"old": "", "new": "x"}]}, {"extra": 1}):
        with pytest.raises(ValidationError):
            Call.model_validate({"path": "a", "keep": 1, **bad})


UNTRUSTED: dict[str, Any] = {
    "type": "object",
    "title": "Search",
    "properties": {
        "q": {"type": "string", "minLength": 1, "examples": ["x"], "default": "", "$comment": "c"},
        "limit": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10, "description": "results"},
        "filters": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 4},
        "weird": {"properties": ["not", "a", "map"], "required": "q"},
    },
    "required": ["q"],
    "additionalProperties": False,
    "x-vendor": {"title": "kept as it is only under a data key"},
    "enum_like": {"const": {"title": "data"}},
}


def test_an_mcp_servers_schema_is_declared_under_the_same_rule_and_never_modified() -> None:
    before = copy.deepcopy(UNTRUSTED)
    declared = declared_schema(UNTRUSTED)
    assert UNTRUSTED == before
    assert declared["properties"] == {
        "q": {"type": "string"},
        "limit": {"type": "integer", "description": "results"},
        "filters": {"type": "object", "additionalProperties": {"type": "string"}},
        "weird": {"properties": ["not", "a", "map"], "required": "q"},
    }
    assert "additionalProperties" not in declared and "title" not in declared
    assert declared["enum_like"] == {"const": {"title": "data"}}
    for value in (None, 3, "text", ["a"]):
        assert declared_schema(value) == value
    info = MCPToolInfo("search", "Search the index.", UNTRUSTED)
    assert native_tool("docs", info).schema().parameters == declared


def test_json_actions_and_the_compact_protocol_read_the_declared_schema() -> None:
    tool = ToolSchema("call", "Call it.\n\nA second paragraph the guide leaves out.", Call.model_json_schema())
    guide = action_guide([tool])
    (args,) = [line.split("args: ", 1)[1] for line in guide.splitlines() if line.strip().startswith("args: ")]
    assert json.loads(args) == DECLARED_CALL
    assert "second paragraph" not in guide
    compact = compact_tool(tool)
    assert compact.parameters == compact_schema(tool.parameters) == DECLARED_CALL  # descriptions already short
    assert compact.description == "Call it."
    declared = ToolSchema("call", "Call it.", input_schema(Call))
    grammar = action_schema([declared])  # what a constrained decoder enforces: the declaration
    assert grammar["$defs"] == {"call__Pair": DECLARED_CALL["$defs"]["Pair"]}
    args = grammar["anyOf"][0]["properties"]["args"]
    assert args["properties"]["default"] == {"items": {"$ref": "#/$defs/call__Pair"}, "type": "array"}
    assert {k: v for k, v in args["properties"].items() if k != "default"} == {
        k: v for k, v in DECLARED_CALL["properties"].items() if k != "default"
    }


def test_descriptions_are_cut_to_the_first_paragraph_then_sentence_then_word() -> None:
    assert short_description("One. Two.\n\nThree.", 80) == "One. Two."
    assert short_description("First sentence fits. " + "x " * 80) == "First sentence fits."
    cut = short_description("word " * 40)
    assert len(cut) <= 80 and cut.endswith("…")
    long = {"properties": {"a": {"type": "string", "description": "d" * 100}}, "type": "object"}
    assert len(compact_schema(long, 20)["properties"]["a"]["description"]) <= 20
