"""``compact_session``: a person's ``/compact [focus]`` on a recorded session, between runs.

The conversation the person talks to (the agent of the latest ``user.message``) is summarized
whole, so the next message starts after one summary; the summary is a ``context.compacted``
event like an automatic one (``trigger: user``). The session is claimed while it is written, so
a run in progress refuses it. The session's model writes the summary unless it is a small-profile
model or none is given: then the deterministic digest does, without a model call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from protoagent.context.compaction import Compactor
from protoagent.context.tokens import counter_for
from protoagent.errors import ConfigError
from protoagent.events.catalog import ContextCompacted
from protoagent.events.log import SessionLog
from protoagent.events.session_lease import claim_session
from protoagent.events.store import SessionStore
from protoagent.json_form import json_form
from protoagent.models.profile import choose_profile
from protoagent.models.protocol import ModelProvider
from protoagent.models.registry import ModelConfig, resolve_model

FOCUS_CHARS = 500


@dataclass(frozen=True, slots=True)
class CompactResult:
    """What ``compact_session`` did."""

    session_id: str
    compacted: bool
    reason: str = ""
    """Why nothing was compacted (``compacted`` is false)."""
    method: str = ""
    turns: tuple[int, ...] = ()
    replaced_tokens: int = 0
    summary_tokens: int = 0
    summary: str = ""

    def to_json(self) -> dict[str, Any]:
        return json_form(self)


async def compact_session(
    session_id: str,
    store: SessionStore,
    *,
    focus: str = "",
    model: str | None = None,
    provider: ModelProvider | None = None,
    context_window: int | None = None,
) -> CompactResult:
    """Summarize the session's conversation so far (see the module). ``model`` is a model spec
    (``provider`` a ready one) to write the summary, the digest when it cannot be resolved;
    ``context_window`` bounds its size.
    Raises ``SessionRunning`` while a run holds the session, ``SessionLoadError`` for a log
    that cannot be loaded, ``ConfigError`` for a focus that is too long."""
    if len(focus) > FOCUS_CHARS:
        raise ConfigError(f"the focus is {len(focus)} characters; keep it under {FOCUS_CHARS}")
    if provider is None and model is not None:
        try:
            provider = resolve_model(model, ModelConfig(context_window=context_window))
        except ConfigError:
            provider = None  # a model that cannot be used here: the digest needs none
    lease = claim_session(store, session_id)
    try:
        log = SessionLog.open(store, session_id)
        said = log.last("user.message")
        if said is None:
            return CompactResult(session_id, False, "nothing to compact: the session has no messages yet")
        choice = choose_profile(provider, "auto", context_window) if provider is not None else None
        writer = provider if choice is not None and choice.profile == "standard" else None
        window = choice.window if choice is not None else context_window
        compactor = Compactor(counter_for(provider), window, writer)
        event = await compactor.compact(log, said.agent, keep_turns=0, trigger="user", focus=focus.strip())
    finally:
        lease.release()
    if event is None:
        return CompactResult(session_id, False, "nothing to compact: the conversation is one summary already")
    compacted = ContextCompacted.model_validate(event.payload)
    return CompactResult(
        session_id,
        True,
        method=compacted.method,
        turns=tuple(compacted.turns),
        replaced_tokens=compacted.replaced_tokens,
        summary_tokens=compacted.summary_tokens,
        summary=compacted.summary,
    )


__all__ = ["CompactResult", "compact_session"]
