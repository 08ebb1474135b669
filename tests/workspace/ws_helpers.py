"""Helpers for workspace tests: the guarded outside folder and direct tool calls."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from protoagent.tools.base import Prepared, Tool, ToolContext, ToolOutput

SENTINEL = b"SENTINEL: must never be read or written by the agent\n"


class OutsideGuard:
    """A folder beside the workspace root whose contents must never change."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir()
        (path / "sentinel.txt").write_bytes(SENTINEL)
        (path / "secret.txt").write_bytes(SENTINEL)
        self._before = self.snapshot()

    def snapshot(self) -> dict[str, tuple[bytes, int]]:
        return {
            str(p.relative_to(self.path)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(self.path.rglob("*"))
            if p.is_file()
        }

    def assert_unchanged(self) -> None:
        assert self.snapshot() == self._before
        assert (self.path / "sentinel.txt").read_bytes() == SENTINEL


def prepare(tool_cls: type[Tool[Any]], ctx: ToolContext, **args: Any) -> Prepared:
    tool = tool_cls()
    model: BaseModel = tool.input_model(**args)
    return tool.prepare(model, ctx)


def execute(tool_cls: type[Tool[Any]], prepared: Prepared, ctx: ToolContext) -> ToolOutput:
    return asyncio.run(tool_cls().execute(prepared, ctx))


def call(tool_cls: type[Tool[Any]], ctx: ToolContext, **args: Any) -> ToolOutput:
    return execute(tool_cls, prepare(tool_cls, ctx, **args), ctx)
