"""A tool's input model is named once: the ``Input`` of its ``Tool[Input, State]`` base."""

from __future__ import annotations

from pydantic import BaseModel

from protoagent.integrations.mcp_tools import GENERAL_MCP_TOOLS
from protoagent.processes.tools import ProcessTool, ShellTool
from protoagent.tools.base import Prepared, Tool, ToolContext, ToolOutput
from protoagent.workspace.tools import WORKSPACE_TOOLS, ReadFileTool


class Words(BaseModel):
    text: str


class Other(BaseModel):
    count: int


class Say(Tool[Words, str]):
    name = "say"
    description = "Say the words."

    def prepare(self, args: Words, ctx: ToolContext) -> Prepared[str]:
        return Prepared(args.text, "none", state=args.text)

    async def execute(self, prepared: Prepared[str], ctx: ToolContext) -> ToolOutput:
        return ToolOutput(prepared.state)


def test_the_input_model_is_the_type_argument_unless_the_class_sets_its_own() -> None:
    assert Say.input_model is Words
    assert Say().schema().parameters["properties"] == {"text": {"type": "string"}}
    assert type("Inherits", (Say,), {}).input_model is Words  # a class built at run time
    assert type("Declares", (Say,), {"input_model": Other}).input_model is Other
    assert ReadFileTool.input_model.__name__ == "ReadFileInput"
    assert ShellTool.input_model.__name__ == "ShellInput" and ProcessTool.input_model.__name__ == "ProcessInput"
    for tool in (*WORKSPACE_TOOLS, *GENERAL_MCP_TOOLS):
        assert tool.input_model.__name__.removesuffix("Input") == tool.__name__.removesuffix("Tool"), tool
