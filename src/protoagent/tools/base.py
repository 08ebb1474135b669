"""What a tool is: a name, a pydantic input model, metadata, ``prepare`` and ``execute``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, TypeVar
from weakref import WeakKeyDictionary

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
    trusted_by: str = ""
    """Why configuration trusts an effect outside the workspace (e.g. an MCP server the person
    trusted); only then may ``auto`` allow it, and the approval reason quotes this."""
    external: str = ""
    """What acts outside the workspace (e.g. an MCP server's tool), named when no one can approve it."""
    action: str = ""
    """The exact action a session rule is matched on when it differs from the preview (a check's
    command, whatever phase the preview names); empty: the preview itself."""


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

    _schema_memo: tuple[tuple[str, str, type[BaseModel]], ToolSchema] | None = None

    def schema(self) -> ToolSchema:
        """What the model sees of this tool. Building a JSON schema is costly and every request
        offers the tools again, so it is built once and rebuilt only when the name, the
        description or the input model changes. Treat the returned schema as read-only."""
        key = (self.name, self.description, self.input_model)
        memo = self._schema_memo
        if memo is None or memo[0] != key:
            memo = (key, ToolSchema(self.name, self.description, input_schema(self.input_model)))
            self._schema_memo = memo
        return memo[1]


_INPUT_SCHEMAS: WeakKeyDictionary[type[BaseModel], dict[str, Any]] = WeakKeyDictionary()
"""``input_schema`` per input model class, built once per process (every session's tools share it)."""


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of a tool's input as the model sees it: pydantic's schema without the
    ``title`` annotations it derives from class and field names (they repeat the names and cost
    tokens on every request), without the top-level ``additionalProperties: false`` (the input
    model still refuses unknown arguments, as typed feedback; a grammar built from the schema
    allows none unless it says so), and an optional property (``X`` or null, default null) shown
    as ``X`` that may be omitted. Every other constraint stays. Built once per class; treat it as
    read-only."""
    cached = _INPUT_SCHEMAS.get(model)
    if cached is not None:
        return cached
    schema: dict[str, Any] = _without_titles(model.model_json_schema())
    if schema.get("additionalProperties") is False:
        del schema["additionalProperties"]
    for prop in schema.get("properties", {}).values():
        _omit_optional_null(prop)
    _INPUT_SCHEMAS[model] = schema
    return schema


def _omit_optional_null(prop: dict[str, Any]) -> None:
    variants = prop.get("anyOf")
    if not (isinstance(variants, list) and len(variants) == 2 and {"type": "null"} in variants):
        return
    if "default" not in prop or prop["default"] is not None:
        return
    del prop["anyOf"], prop["default"]
    prop.update(next(v for v in variants if v != {"type": "null"}))


_LITERAL_KEYS = frozenset({"default", "const", "enum", "examples"})
"""Keys whose values are data, not schemas: a ``title`` inside them is kept."""


def _without_titles(node: Any) -> Any:
    if isinstance(node, list):
        return [_without_titles(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            out[key] = {name: _without_titles(sub) for name, sub in value.items()}
        else:
            out[key] = value if key in _LITERAL_KEYS else _without_titles(value)
    return out


AnyTool = Tool[Any]
"""A tool of any input model, as registries and pipelines hold them."""
