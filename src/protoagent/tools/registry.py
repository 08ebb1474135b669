"""``ToolRegistry``: the tools a session can call, found by exact name only."""

from __future__ import annotations

from collections.abc import Iterable

from protoagent.errors import ConfigError
from protoagent.models.types import ToolSchema
from protoagent.tools.base import AnyTool


class ToolRegistry:
    """Exact-name lookup; an unknown name is never resolved to a guessed alias."""

    def __init__(self, tools: Iterable[AnyTool] = ()) -> None:
        self._tools: dict[str, AnyTool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: AnyTool) -> None:
        if tool.name in self._tools:
            raise ConfigError(f"tool {tool.name!r} is registered twice; each tool name must be unique")
        self._tools[tool.name] = tool

    def get(self, name: str) -> AnyTool | None:
        return self._tools.get(name)

    def tools(self) -> list[AnyTool]:
        return list(self._tools.values())

    def names(self) -> list[str]:
        return list(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def schemas(self, names: Iterable[str] | None = None) -> tuple[ToolSchema, ...]:
        chosen = self._tools if names is None else {n: self._tools[n] for n in names}
        return tuple(tool.schema() for tool in chosen.values())

    def subset(self, names: Iterable[str]) -> ToolRegistry:
        """A registry holding only ``names``; unknown names are a configuration error."""
        wanted = list(names)
        missing = [n for n in wanted if n not in self._tools]
        if missing:
            raise ConfigError(f"unknown tool(s) {missing!r}; available tools: {', '.join(sorted(self._tools))}")
        return ToolRegistry(self._tools[n] for n in wanted)
