"""``HookPipeline``: per-run hooks, each with one semantic owner, run in ``HOOK_ORDER``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from protoagent.errors import ConfigError
from protoagent.events.types import Event
from protoagent.hooks.order import HOOK_ORDER, HookOwner
from protoagent.models.types import ModelRequest


class BeforeModelHook(Protocol):
    """Reshapes a request just before it reaches the provider (projection, admission ...).

    It sees the session's events read-only and returns a new request; persisted events
    are never changed by a hook.
    """

    def __call__(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest: ...


@dataclass(frozen=True, slots=True)
class HookRegistration:
    owner: HookOwner
    """One semantic owner per concern (``workspace-instructions``, ``tool-context-projection`` ...);
    its place in ``HOOK_ORDER`` is the hook's place in the pipeline."""
    hook: BeforeModelHook


class HookPipeline:
    """Runs before-model hooks in ``HOOK_ORDER``. Two registrations with one owner fail at once."""

    def __init__(self, registrations: Sequence[HookRegistration] = ()) -> None:
        self._registrations: list[HookRegistration] = []
        for registration in registrations:
            self.register(registration)

    def register(self, registration: HookRegistration) -> None:
        if any(r.owner == registration.owner for r in self._registrations):
            raise ConfigError(f"hook owner {registration.owner!r} is registered twice; each concern has one owner")
        if registration.owner not in HOOK_ORDER:
            raise ConfigError(f"hook owner {registration.owner!r} has no place in protoagent.hooks.order.HOOK_ORDER")
        self._registrations.append(registration)
        self._registrations.sort(key=lambda r: HOOK_ORDER.index(r.owner))

    @property
    def owners(self) -> list[HookOwner]:
        return [r.owner for r in self._registrations]

    def before_model(self, request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        for registration in self._registrations:
            request = registration.hook(request, events)
        return request
