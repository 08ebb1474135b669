"""``ToolContextProjectionHook``: old oversized tool results become receipts at the model boundary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from protoagent.context.projection import (
    DEFAULT_SETTINGS,
    ObservationOf,
    ProjectionSettings,
    observation_lookup,
    project_request,
)
from protoagent.events.types import Event
from protoagent.hooks.pipeline import HookRegistration
from protoagent.models.types import ModelRequest
from protoagent.tools.base import AnyTool, ToolMetadata

PROJECTION_STAGE = 50
PROJECTION_OWNER = "tool-context-projection"


class ToolContextProjectionHook:
    """Keeps the recent tool batches exact and projects older oversized text-only results.

    ``observations`` maps tool names to their ``ToolMetadata`` (or is a lookup function);
    the hook decides from metadata, never from tool-name branches (skills excepted, by spec).
    A result projected once stays projected for the same agent in every later request.
    """

    def __init__(
        self,
        observations: Mapping[str, ToolMetadata] | ObservationOf,
        settings: ProjectionSettings = DEFAULT_SETTINGS,
    ) -> None:
        self.observation_of = observation_lookup(observations)
        self.settings = settings
        self._projected: dict[str, frozenset[str]] = {}

    @classmethod
    def for_tools(
        cls, tools: Iterable[AnyTool], settings: ProjectionSettings = DEFAULT_SETTINGS
    ) -> ToolContextProjectionHook:
        return cls({tool.name: tool.metadata for tool in tools}, settings)

    def projected(self, agent: str = "main") -> frozenset[str]:
        """Call ids this hook has projected so far for ``agent``."""
        return self._projected.get(agent, frozenset())

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        sticky = self.projected(request.agent_role)
        projected, ids = project_request(request, events, self.observation_of, self.settings, sticky=sticky)
        self._projected[request.agent_role] = sticky | ids
        return projected

    def registration(self, stage: int = PROJECTION_STAGE) -> HookRegistration:
        return HookRegistration(stage, PROJECTION_OWNER, self)
