"""Small real tools used to exercise the pipeline: they write real files."""

from __future__ import annotations

from pydantic import BaseModel, Field

from protoagent.tools.base import Prepared, Tool, ToolContext, ToolMetadata, ToolOutput


class NoteArgs(BaseModel):
    name: str = Field(pattern=r"^[a-z]+\.txt$", description="file name, like notes.txt")
    text: str


class WriteNote(Tool[NoteArgs]):
    name = "write_note"
    description = "Write a note file at the workspace root."
    input_model = NoteArgs
    metadata = ToolMetadata(effect="write", presentation="diff")
    executions = 0

    def prepare(self, args: NoteArgs, ctx: ToolContext) -> Prepared:
        return Prepared(preview=f"+++ {args.name}\n+{args.text}", effect="write", paths=(args.name,), state=args)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        WriteNote.executions += 1
        args: NoteArgs = prepared.state
        (ctx.root / args.name).write_text(args.text)
        return ToolOutput(f"wrote {args.name}", data={"path": args.name})


class EchoArgs(BaseModel):
    text: str


class Echo(Tool[EchoArgs]):
    name = "echo"
    description = "Return the text."
    input_model = EchoArgs
    metadata = ToolMetadata(effect="none")

    def prepare(self, args: EchoArgs, ctx: ToolContext) -> Prepared:
        return Prepared(preview=args.text, effect="none", state=args.text)

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(str(prepared.state))


class Explode(Tool[EchoArgs]):
    name = "explode"
    description = "Fails while executing."
    input_model = EchoArgs
    metadata = ToolMetadata(effect="none")

    def prepare(self, args: EchoArgs, ctx: ToolContext) -> Prepared:
        return Prepared(preview=args.text, effect="none")

    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput:
        raise OSError("disk on fire")
