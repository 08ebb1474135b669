"""One way for a run to end on SIGINT, SIGTERM or SIGHUP.

Each of the three signals cancels the running coroutine, so the run records ``run.ended`` with
status ``cancelled`` and its session stops every process group it started; ``Interrupted``
then carries the signal, and the CLI exits with 128 + its number (130, 143, 129). A second
signal while the run is unwinding cancels again. Descendants that left their process group are
adopted (subreaper) and stopped when the run ends, whether it was interrupted or not.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Coroutine
from typing import Any, TypeVar

from protoagent.api import become_subreaper, stop_descendants

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(Exception):
    """The run was stopped by ``signum``."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def run_until_signalled(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to its end; raise ``Interrupted`` when a stop signal ended it instead."""
    become_subreaper()
    try:
        return asyncio.run(_guarded(coro))
    except KeyboardInterrupt:
        raise Interrupted(signal.SIGINT) from None
    finally:
        stop_descendants()


async def _guarded(coro: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        return await coro
    except asyncio.CancelledError:
        if received:
            raise Interrupted(received[0]) from None
        raise
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
