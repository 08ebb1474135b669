"""Deferred verification said later in a session: "don't run it, I'll do it" after editing or
after final checks started is honoured at once, with no classification call, no model turn and
no repair (spec/task-workflow.txt, deferral)."""

from __future__ import annotations

from collections.abc import Sequence

from protoagent.events.types import Event
from protoagent.models.protocol import ModelProvider
from protoagent.workflow.contract import RunContract, Surface, classify, select_contract
from protoagent.workflow.evidence import check_results
from protoagent.workflow.phase_control import run_start
from protoagent.workflow.workers import file_writes

LATER_DEFERRAL = "a later message defers verification of the session's changes to the person"


def edited_or_verified(events: Sequence[Event]) -> bool:
    """The events hold an applied file change or a started final check."""
    return bool(file_writes(events)) or any(r.phase == "verify" for r in check_results(events))


def asks_for_change(message: str) -> bool:
    """The message also asks for an edit, so it is new work rather than only a handoff."""
    ruled = classify(message)
    return ruled is not None and ruled[0] == "editing"


def honoured_at_once(deferred: bool, message: str, events: Sequence[Event]) -> bool:
    """A deferral in a later message of a session whose earlier runs edited or started final checks."""
    earlier = [e for e in events if e.seq < run_start(events)]
    return deferred and edited_or_verified(earlier) and not asks_for_change(message)


async def later_deferral(message: str, earlier: Sequence[Event]) -> RunContract | None:
    """The editing contract with verification deferred, chosen without a model call, when
    ``message`` only hands verification to the person in a session that already edited."""
    if not earlier or asks_for_change(message) or not edited_or_verified(earlier):
        return None
    probe = await select_contract(message, "editing")  # a forced surface reads the flags without a model
    if not probe.defer_verification:
        return None
    return RunContract("editing", "rules", LATER_DEFERRAL, probe.read_only, True)


async def session_contract(
    message: str, forced: Surface | None, provider: ModelProvider | None, earlier: Sequence[Event] = ()
) -> RunContract:
    """The run's contract: a later deferral without a model call, else ``select_contract``."""
    deferral = await later_deferral(message, earlier) if forced is None else None
    return deferral or await select_contract(message, forced, provider)
