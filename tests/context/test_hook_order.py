"""The before-model hooks run in the one order ``protoagent.hooks.order`` lists, however they
were registered; an owner the table does not place is refused."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import cast

import pytest

from protoagent.errors import ConfigError
from protoagent.events.types import Event
from protoagent.hooks.order import HOOK_ORDER, HookOwner
from protoagent.hooks.pipeline import BeforeModelHook, HookPipeline, HookRegistration
from protoagent.models.types import ModelRequest


def _marking(owner: str) -> BeforeModelHook:
    def mark(request: ModelRequest, events: Sequence[Event]) -> ModelRequest:
        return replace(request, system=f"{request.system}|{owner}")

    return mark


def test_hooks_run_in_the_table_order_whatever_the_registration_order() -> None:
    pipeline = HookPipeline()
    for owner in reversed(HOOK_ORDER):
        pipeline.register(HookRegistration(owner, _marking(owner)))
    assert pipeline.owners == list(HOOK_ORDER)
    shaped = pipeline.before_model(ModelRequest(system="", messages=()), [])
    assert shaped.system == "|" + "|".join(HOOK_ORDER)
    # The shaping hooks come first, admission after every one that changes the size, the yields last.
    assert HOOK_ORDER.index("compact-protocol") < HOOK_ORDER.index("context-admission")
    assert HOOK_ORDER[-4:] == ("progress", "work-yield", "phase-control", "verified-close")


def test_an_owner_outside_the_table_is_refused() -> None:
    stray = cast(HookOwner, "my-hook")
    with pytest.raises(ConfigError, match=r"'my-hook' has no place in protoagent\.hooks\.order\.HOOK_ORDER"):
        HookPipeline([HookRegistration(stray, _marking("my-hook"))])


def test_one_owner_registers_once() -> None:
    hook = _marking("skills")
    with pytest.raises(ConfigError, match="registered twice"):
        HookPipeline([HookRegistration("skills", hook), HookRegistration("skills", hook)])
