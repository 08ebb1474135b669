"""What a tool is: a name, a pydantic input model, metadata, ``prepare`` and ``execute``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel

from protoagent.models.types import ToolSchema

Effect = Literal["none", "read", "write", "execute"]
"""What running a tool does: ``write`` and ``execute`` are effects that need approval."""
Observation = Literal["projectable", "revision_aware", "exact"]
"""How old results of the tool may be handled at the model boundary."""
Presentation = Literal["generic", "terminal", "diff"]
Profile = Literal["small", "standard"]

InputT = TypeVar("InputT", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class ToolMetadata:
    """Declared facts about a tool that the pipeline, approvals and projection read."""

    effect: Effect = "read"
    observation: Observation = "projectable"
    presentation: Presentation = "generic"
    roles: frozenset[str] = frozenset()
    """Roles allowed to call the tool; empty means any role."""


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Per-call facts a tool may read. Services are shared per session (process registry ...)."""

    session_id: str
    call_id: str
    root: Path
    """The selected workspace root (already resolved)."""
    agent_role: str = "main"
    profile: Profile = "standard"
    artifacts_dir: Path | None = None
    """Session-scoped folder for journals and large outputs."""
    services: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Prepared:
    """A validated, ready-to-run call: what the approver sees and what execute needs."""

    preview: str
    """Exactly what will happen (a unified diff, an absolute argv with cwd/env/limits ...)."""
    effect: Effect
    paths: tuple[str, ...] = ()
    """Workspace-relative paths the effect writes (for write-scope decisions)."""
    inside_workspace: bool = True
    state: Any = None
    """Tool-private data handed to ``execute``."""


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool returns: model-visible text plus structured receipt data."""

    text: str
    status: Literal["ok", "error"] = "ok"
    data: dict[str, Any] = field(default_factory=dict)
    artifact: str | None = None
    """Locator of a journal or full output kept outside the event log."""


class Tool(ABC, Generic[InputT]):
    """Base class for tools. Subclasses set the class attributes and implement two methods.

    ``prepare`` validates against live state and builds the preview; it raises
    ``ToolRejected`` for anything the model can correct, before any approval.
    ``execute`` performs the effect and returns a ``ToolOutput``.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    metadata: ClassVar[ToolMetadata] = ToolMetadata()

    @abstractmethod
    def prepare(self, args: InputT, ctx: ToolContext) -> Prepared: ...

    @abstractmethod
    async def execute(self, prepared: Prepared, ctx: ToolContext) -> ToolOutput: ...

    def schema(self) -> ToolSchema:
        return ToolSchema(self.name, self.description, self.input_model.model_json_schema())


AnyTool = Tool[Any]
"""A tool of any input model, as registries and pipelines hold them."""
