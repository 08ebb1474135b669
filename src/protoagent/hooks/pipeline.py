"""``HookPipeline``: ordered per-run hooks, each with one semantic owner."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from protoagent.errors import ConfigError
from protoagent.events.types import Event
from protoagent.models.types import ModelRequest


class BeforeModelHook(Protocol):
    """Reshapes a request just before it reaches the provider (projection, admission ...).

    It sees the session's events read-only and returns a new request; persisted events
    are never changed by a hook.
    """

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest: ...


@dataclass(frozen=True, slots=True)
class HookRegistration:
    stage: int
    """Lower stages run first."""
    owner: str
    """One semantic owner per concern (``workspace-instructions``, ``projection`` ...)."""
    hook: BeforeModelHook


class HookPipeline:
    """Runs before-model hooks in stage order. Two registrations with one owner fail at once."""

    def __init__(self, registrations: Sequence[HookRegistration] = ()) -> None:
        self._registrations: list[HookRegistration] = []
        for registration in registrations:
            self.register(registration)

    def register(self, registration: HookRegistration) -> None:
        if any(r.owner == registration.owner for r in self._registrations):
            raise ConfigError(f"hook owner {registration.owner!r} is registered twice; each concern has one owner")
        self._registrations.append(registration)
        self._registrations.sort(key=lambda r: r.stage)

    @property
    def owners(self) -> list[str]:
        return [r.owner for r in self._registrations]

    def before_model(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        for registration in self._registrations:
            request = registration.hook(request, events)
        return request
