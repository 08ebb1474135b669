"""The model boundary: one small protocol with one streaming method."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from protoagent.models.types import ModelEvent, ModelRequest


@runtime_checkable
class ModelProvider(Protocol):
    """A model behind one async streaming call.

    ``stream`` yields zero or more ``TextDelta`` and exactly one final ``ModelTurn``.
    Failures raise ``ProviderError`` (``transient=True`` when a retry may help).
    """

    name: str
    """Provider name as used in model specs (``scripted``, ``openai``, ``local`` ...)."""
    model: str
    """The model id this provider targets."""

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]: ...
