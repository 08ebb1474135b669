"""What a tool call had produced when its run was cancelled.

Cancellation stays the same ``asyncio.CancelledError`` all the way up (timeouts and task
groups tell theirs apart by identity), so a tool that has partial results, such as a command's
output so far, attaches them to that exception; the pipeline records them in the call's
``tool.ended`` before the cancellation goes on.
"""

from __future__ import annotations

from protoagent.tools.base import ToolOutput

_ATTRIBUTE = "protoagent_partial_output"


def attach_partial_output(error: BaseException, output: ToolOutput) -> None:
    """Remember on ``error`` what the cancelled call had produced."""
    setattr(error, _ATTRIBUTE, output)


def partial_output(error: BaseException) -> ToolOutput | None:
    """What a cancelled call had produced, if its tool attached it."""
    found = getattr(error, _ATTRIBUTE, None)
    return found if isinstance(found, ToolOutput) else None
