"""One way for a run to end on SIGINT, SIGTERM or SIGHUP.

Each of the three signals cancels the running coroutine, so the run records ``run.ended`` with
status ``cancelled`` and its session stops every process group it started; ``Interrupted``
then carries the signal, and the CLI exits with 128 + its number (130, 143, 129). A second
signal while the run is unwinding cancels again. Descendants that left their process group are
adopted (subreaper) and stopped when the run ends, whether it was interrupted or not; after a
signal they get a short grace period.

Once a signal has ended the run and everything durable is done (``run.ended`` appended, the
store closed, every process stopped), nothing is left worth waiting for: a worker thread may
still be inside native model code until its next cancellation check, and tearing down the
interpreter's modules alone takes tenths of a second on a loaded machine. So the run's executor
does not wait for its threads after a signal, and the CLI's entry point ends the process at once
with ``leave_if_stopped`` (stdout and stderr flushed first).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from protoagent.api import become_subreaper, stop_descendants

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
DESCENDANT_GRACE_S = 1.0
"""Seconds adopted descendants get between SIGTERM and SIGKILL when a run ends by itself."""
INTERRUPTED_GRACE_S = 0.25
"""The same when a stop signal ended the run: the person asked for it to stop now."""
_STOPPED_EXIT_CODES: set[int] = set()
"""Exit codes of runs a stop signal ended in this process."""


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
    grace_s = DESCENDANT_GRACE_S
    try:
        return asyncio.run(_guarded(coro))
    except KeyboardInterrupt:
        grace_s = INTERRUPTED_GRACE_S
        _STOPPED_EXIT_CODES.add(128 + signal.SIGINT)
        raise Interrupted(signal.SIGINT) from None
    except Interrupted:
        grace_s = INTERRUPTED_GRACE_S
        raise
    finally:
        stop_descendants(grace_s)


def leave_if_stopped(exit_code: object) -> None:
    """End the process now with ``exit_code`` when a stop signal ended a run with that code,
    skipping interpreter teardown and the wait for abandoned worker threads; else return."""
    if not isinstance(exit_code, int) or exit_code not in _STOPPED_EXIT_CODES:
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            continue
    os._exit(exit_code)


class _RunExecutor(ThreadPoolExecutor):
    """The run's default executor; once ``abandon`` is set, shutting it down does not wait for
    threads still at work (their cancellation flags end them at their next check)."""

    abandon = False

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        super().shutdown(wait=wait and not self.abandon, cancel_futures=cancel_futures or self.abandon)


async def _guarded(coro: Coroutine[Any, Any, T]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    received: list[int] = []
    executor = _RunExecutor(thread_name_prefix="protoagent-run")
    loop.set_default_executor(executor)

    def on_signal(signum: int) -> None:
        received.append(signum)
        executor.abandon = True
        task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        return await coro
    except asyncio.CancelledError:
        if received:
            stop = Interrupted(received[0])
            _STOPPED_EXIT_CODES.add(stop.exit_code)
            raise stop from None
        raise
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
