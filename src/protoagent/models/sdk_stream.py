"""The streaming reply of a hosted-API adapter (``anthropic``, ``openai_compat``), one way for both.

Text reaches the caller as it arrives (in JSON action mode only a ``final`` action's answer, as
``FinalTextStream`` decodes it); the vendor SDK's failures become ``ProviderError`` once, here;
the reply ends with its turn, parsed from the text in JSON action mode.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from protoagent.errors import ProviderError
from protoagent.models import http_errors
from protoagent.models.json_actions import FinalTextStream, parse_action, wants_structured_output
from protoagent.models.types import ModelEvent, ModelRequest, ModelTurn, TextDelta, ToolCall, Usage


def final_text_stream(request: ModelRequest) -> FinalTextStream | None:
    """The answer filter of a JSON-action request; ``None`` where the reply's text is shown as it is."""
    return FinalTextStream() if request.action_mode == "json" and not wants_structured_output(request) else None


async def sdk_deltas(
    provider: str,
    sdk: Any,
    open_stream: Callable[[], Awaitable[Any]],
    add: Callable[[Any], str],
    final: FinalTextStream | None,
    status_error: Callable[[Any], ProviderError],
) -> AsyncGenerator[TextDelta, None]:
    """The text of the SDK stream ``open_stream`` opens; ``add`` takes each item into the reply's
    state and returns its new text. The stream is closed however the loop ends; an HTTP error
    status goes through ``status_error``, any other SDK or transport failure is mapped once."""
    try:
        items = await open_stream()
        try:
            async for item in items:
                text = add(item)
                shown = final.feed(text) if final is not None else text
                if shown:
                    yield TextDelta(shown)
        finally:
            await items.close()
    except sdk.APIStatusError as error:
        raise status_error(error) from error
    except Exception as error:
        failure = http_errors.vendor_failure(provider, error, sdk)
        if failure is None:
            raise
        raise failure from error


def closing_events(
    request: ModelRequest,
    final: FinalTextStream | None,
    text: str,
    tool_calls: tuple[ToolCall, ...],
    usage: Usage,
    stop_reason: str,
) -> list[ModelEvent]:
    """The reply's turn; in JSON action mode the action parsed from its text, after the part of a
    final answer not streamed yet (a model's own stop reason other than ``stop`` wins)."""
    if final is None:
        return [ModelTurn(text=text, tool_calls=tool_calls, usage=usage, stop_reason=stop_reason)]
    turn = parse_action(text, request.tools)
    events: list[ModelEvent] = []
    rest = final.rest(turn)
    if rest:
        events.append(TextDelta(rest))
    reason = turn.stop_reason if stop_reason == "stop" else stop_reason
    events.append(ModelTurn(text=turn.text, tool_calls=turn.tool_calls, usage=usage, stop_reason=reason))
    return events
