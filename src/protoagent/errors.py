"""The ProtoAgent exception tree: three families under one root, mapped once.

    ProtoAgentError
      ConfigError          the user or developer misconfigured something (names the fix)
      ToolRejected         feedback the model can correct; the loop goes on
      RunError
        ProviderError      provider, status, retry_after
        LimitExceeded      step, time or token budget
        SessionLoadError   session id, what is wrong
      YieldControl         not an error: a hook hands control back with a ``ControlSignal``

Vendor exceptions are translated once, in the adapter that calls the vendor.
"""

from __future__ import annotations

from typing import Any, Protocol


class ProtoAgentError(Exception):
    """Root of every error ProtoAgent raises on purpose."""


class ConfigError(ProtoAgentError):
    """Something was misconfigured; the message names the fix."""


class ToolRejected(ProtoAgentError):
    """A tool call the model can correct: no effect happened.

    ``kind`` is a short machine-readable reason (``invalid_arguments``,
    ``unknown_tool``, ``stale_revision`` ...); ``details`` carries structured
    hints such as ``available_tools`` or ``closest_match``.
    """

    def __init__(self, message: str, *, kind: str = "rejected", details: dict[str, Any] | None = None):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.details: dict[str, Any] = details or {}


class RunError(ProtoAgentError):
    """A run cannot go on."""


class ProviderError(RunError):
    """A model provider failed. ``transient`` errors may be retried."""

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        status: int | None = None,
        retry_after: float | None = None,
        transient: bool = False,
    ):
        super().__init__(message)
        self.provider = provider
        self.status = status
        self.retry_after = retry_after
        self.transient = transient


class LimitExceeded(RunError):
    """A step, time or token budget ran out (or mandatory context cannot fit)."""

    def __init__(self, message: str, *, limit: str):
        super().__init__(message)
        self.limit = limit


class SessionLoadError(RunError):
    """A stored session cannot be loaded; loading refuses rather than guessing."""

    def __init__(self, session_id: str, problem: str):
        super().__init__(f"session {session_id!r} cannot be loaded: {problem}")
        self.session_id = session_id
        self.problem = problem


class ControlSignal(Protocol):
    """Why an agent handed control back: a frozen value the application matches on by type
    (the workflow's sealed set is ``protoagent.workflow.signals``)."""

    @property
    def reason(self) -> str:
        """The line the turn's end records (``turn.ended`` reason)."""
        ...


class YieldControl(ProtoAgentError):
    """Raised by a before-model hook with a typed ``ControlSignal``: the agent stops before its
    next model request and hands control back to the workflow. Not an error for the user."""

    def __init__(self, signal: ControlSignal):
        super().__init__(signal.reason)
        self.signal = signal
