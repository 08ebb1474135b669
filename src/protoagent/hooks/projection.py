"""``ToolContextProjectionHook``: old tool results become receipts by a token budget, at the model boundary."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from protoagent.context.projection import (
    DEFAULT_SETTINGS,
    ObservationOf,
    ProjectionSettings,
    ProjectionState,
    observation_lookup,
    project_request,
    settings_for,
)
from protoagent.context.tokens import TokenCounter, counter_for
from protoagent.events.types import Event
from protoagent.hooks.order import HookOwner
from protoagent.hooks.pipeline import HookRegistration
from protoagent.models.profile import PromptProfile
from protoagent.models.registry import ModelConfig
from protoagent.models.types import ModelRequest
from protoagent.tools.base import AnyTool, ToolMetadata

PROJECTION_OWNER: HookOwner = "tool-context-projection"


class ToolContextProjectionHook:
    """Marks stale reads and projects old results once the history passes the budget.

    ``observations`` maps tool names to their ``ToolMetadata`` (or is a lookup function);
    the hook decides from metadata, never from tool-name branches (skills excepted, by spec).
    A result projected or marked once stays so for the same agent in every later request.
    """

    def __init__(
        self,
        observations: Mapping[str, ToolMetadata] | ObservationOf,
        settings: ProjectionSettings = DEFAULT_SETTINGS,
        counter: TokenCounter | None = None,
    ) -> None:
        self.observation_of = observation_lookup(observations)
        self.settings = settings
        self.counter = counter
        self._states: dict[str, ProjectionState] = {}

    @classmethod
    def for_tools(
        cls,
        tools: Iterable[AnyTool],
        settings: ProjectionSettings = DEFAULT_SETTINGS,
        counter: TokenCounter | None = None,
    ) -> ToolContextProjectionHook:
        return cls({tool.name: tool.metadata for tool in tools}, settings, counter)

    @classmethod
    def for_provider(
        cls, tools: Iterable[AnyTool], provider: object, config: ModelConfig, profile: PromptProfile
    ) -> ToolContextProjectionHook:
        """The profile's budget (capped by a known window), counted with the provider's tokenizer."""
        return cls.for_tools(tools, settings_for(profile, config.context_window), counter_for(provider))

    def projected(self, agent: str = "main") -> frozenset[str]:
        """Call ids this hook has projected so far for ``agent``."""
        state = self._states.get(agent)
        return state.projected if state is not None else frozenset()

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        state = self._states.get(request.agent_role)
        shaped, self._states[request.agent_role] = project_request(
            request, events, self.observation_of, self.settings, state=state, counter=self.counter
        )
        return shaped

    def registration(self) -> HookRegistration:
        return HookRegistration(PROJECTION_OWNER, self)
