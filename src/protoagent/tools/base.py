"""What a tool is: a name, a pydantic input model, metadata, ``prepare`` and ``execute``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Literal, get_args
from weakref import WeakKeyDictionary

from pydantic import BaseModel
from typing_extensions import TypeVar

from protoagent.models.declarations import declared_schema
from protoagent.models.profile import PromptProfile
from protoagent.models.types import ToolSchema
from protoagent.tools.services import RunServices

Effect = Literal["none", "read", "write", "execute"]
"""What running a tool does: ``write`` and ``execute`` are effects that need approval."""
Observation = Literal["projectable", "revision_aware", "exact"]
"""How old results of the tool may be handled at the model boundary."""
Presentation = Literal["generic", "terminal", "diff"]

InputT = TypeVar("InputT", bound=BaseModel)
StateT = TypeVar("StateT", default=Any)
"""What a tool's ``prepare`` hands its ``execute``; a tool that does not name it holds ``Any``."""


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
    """Per-call facts a tool may read. Services are shared per session (``RunServices``)."""

    session_id: str
    call_id: str
    root: Path
    """The selected workspace root (already resolved)."""
    agent_role: str = "main"
    profile: PromptProfile = "standard"
    artifacts_dir: Path | None = None
    """Session-scoped folder for journals and large outputs."""
    services: RunServices = field(default_factory=RunServices)


@dataclass(frozen=True, slots=True)
class Prepared(Generic[StateT]):
    """A validated, ready-to-run call: what the approver sees and what execute needs."""

    preview: str
    """Exactly what will happen (a unified diff, an absolute argv with cwd/env/limits ...)."""
    effect: Effect
    paths: tuple[str, ...] = ()
    """Workspace-relative paths the effect writes (for write-scope decisions)."""
    inside_workspace: bool = True
    state: StateT = None  # type: ignore[assignment]  # a tool without state leaves it None
    """Tool-private data handed to ``execute``, typed by the tool's ``StateT``."""
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


class Tool(ABC, Generic[InputT, StateT]):
    """Base class for tools. Subclasses set the class attributes and implement two methods.

    ``prepare`` validates against live state and builds the preview; it raises
    ``ToolRejected`` for anything the model can correct, before any approval.
    ``execute`` performs the effect and returns a ``ToolOutput``. ``Tool[Input, State]`` types
    what ``prepare`` hands ``execute`` (``Prepared[State]``), so ``execute`` needs no check of it,
    and names the input model: ``input_model`` is ``Input`` unless the class sets it itself.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    input_model: ClassVar[type[BaseModel]]
    """The model call arguments are validated into; by default the ``Input`` of ``Tool[Input, ...]``."""
    metadata: ClassVar[ToolMetadata] = ToolMetadata()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "input_model" in cls.__dict__:
            return  # set by the class itself (a tool class built at run time)
        for base in cls.__dict__.get("__orig_bases__", ()):
            declared = get_args(base)[:1]
            if declared and isinstance(declared[0], type) and issubclass(declared[0], BaseModel):
                cls.input_model = declared[0]
                return

    @abstractmethod
    def prepare(self, args: InputT, ctx: ToolContext) -> Prepared[StateT]: ...

    @abstractmethod
    async def execute(self, prepared: Prepared[StateT], ctx: ToolContext) -> ToolOutput: ...

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
    """The JSON schema of a tool's input as the model sees it: the input model's schema under the
    one declaration rule (``models.declarations``: no defaults, bounds, titles or
    ``additionalProperties: false``; the input model still applies them when it validates a call).
    Built once per class; treat it as read-only."""
    cached = _INPUT_SCHEMAS.get(model)
    if cached is not None:
        return cached
    schema: dict[str, Any] = declared_schema(model.model_json_schema())
    _INPUT_SCHEMAS[model] = schema
    return schema


AnyTool = Tool[Any, Any]
"""A tool of any input model and state, as registries and pipelines hold them."""
