"""Tool schemas are built once per tool and follow every change of a tool or of the tool set."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, Field, ValidationError

from protoagent.agents.loop import AgentLoop, Budget
from protoagent.agents.presets import Preset
from protoagent.agents.session import AgentSession, SessionSpec, builtin_tools
from protoagent.events import MemoryStore
from protoagent.models.declarations import declared_schema
from protoagent.models.types import ToolSchema
from protoagent.testing import ScriptedModel, final_turn, tool_turn
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolOutput, input_schema
from protoagent.tools.registry import ToolRegistry


class PingArgs(BaseModel):
    text: str = Field(description="what to send back")


class PingArgsV2(BaseModel):
    text: str
    times: int = Field(1, ge=1)


class Ping(Tool[PingArgs]):
    name = "ping"
    description = "Send the text back."
    input_model = PingArgs

    def prepare(self, args: PingArgs, ctx: ToolContext) -> Prepared:
        return Prepared(args.text, "none", state=args.text)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(str(prepared.state))


class Pong(Ping):
    name = "pong"


def fresh(tool: Tool[Any]) -> ToolSchema:
    return ToolSchema(tool.name, tool.description, input_schema(tool.input_model))


def test_memoized_schemas_equal_freshly_built_ones_for_every_builtin_tool() -> None:
    for tool in builtin_tools():
        first = tool.schema()
        assert first == fresh(tool)
        assert tool.schema() is first


def test_a_tool_schema_is_rebuilt_when_its_description_or_input_model_changes() -> None:
    tool = Ping()
    before = tool.schema()
    tool.description = "Send the text back, louder."  # type: ignore[misc]
    described = tool.schema()
    assert described is not before and described.description == "Send the text back, louder."
    tool.input_model = PingArgsV2  # type: ignore[misc,assignment]
    assert tool.schema() == fresh(tool) and "times" in tool.schema().parameters["properties"]
    assert Ping().schema() == before


def test_registry_schemas_follow_the_tool_set() -> None:
    registry = ToolRegistry([Ping()])
    assert [s.name for s in registry.schemas()] == ["ping"]
    registry.add(Pong())
    assert [s.name for s in registry.schemas()] == ["ping", "pong"]
    assert [s.name for s in registry.schemas(["pong"])] == ["pong"]
    assert [s.name for s in registry.subset(["pong"]).schemas()] == ["pong"]


def test_requests_offer_the_process_tool_once_a_shell_call_leaves_a_process_running(tmp_path: Path) -> None:
    model = ScriptedModel.from_lines(
        [tool_turn("shell", command="sleep 5", yield_time_ms=0), tool_turn("ping", text="x"), final_turn("done")]
    )
    spec = SessionSpec(
        repo=tmp_path,
        model="scripted:inline",
        store=MemoryStore(),
        preset=Preset("t", "You test.", ("shell", "ping"), max_steps=5),
        approval="auto",
        provider=model,
        tools=[*builtin_tools(), Ping()],
        artifacts_root=tmp_path / "artifacts",
    )
    session = AgentSession.create(spec)
    try:
        outcome = asyncio.run(AgentLoop(session, budget=Budget(5)).run_turn("go"))
    finally:
        session.close()
    assert outcome.status == "completed"
    offered = [[t.name for t in request.tools] for request in model.requests]
    assert offered == [["shell", "ping"], ["shell", "ping", "process"], ["shell", "ping", "process"]]
    assert model.requests[1].tools[2] == fresh(session.registry.get("process"))  # type: ignore[arg-type]


class Titled(BaseModel):
    title: str = Field(description="a property that happens to be named title")
    scope: list[str] | None = Field(None, description="optional list")
    level: int | None = Field(2, ge=1)
    data: dict[str, str] = Field(default_factory=lambda: {"title": "kept"})


def test_input_schemas_declare_under_the_one_rule_and_the_model_still_validates_the_rest() -> None:
    raw = Titled.model_json_schema()
    schema = input_schema(Titled)
    assert schema == declared_schema(raw)
    assert raw["title"] == "Titled" and "title" not in schema
    assert schema["required"] == raw["required"] == ["title"]
    assert schema["properties"] == {
        "title": {"description": "a property that happens to be named title", "type": "string"},
        "scope": {"description": "optional list", "items": {"type": "string"}, "type": "array"},
        "level": {"type": "integer"},
        "data": {"additionalProperties": {"type": "string"}, "type": "object"},
    }
    assert Titled.model_validate({"title": "t"}).level == 2  # a missing argument gets its default
    with pytest.raises(ValidationError):
        Titled.model_validate({"title": "t", "level": 0})  # a bound the declaration leaves out
