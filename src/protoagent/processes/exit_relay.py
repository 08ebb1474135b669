"""A launcher that stays the leader of its command's process group and ends as its child ended.

The sandbox launchers (Landlock's supervisor, the bubblewrap cleanup) fork the command and
wait for it. The harness signals the whole group (SIGTERM on a timeout), which reaches the
child directly, so the launcher ignores those signals itself and, once the child is gone,
ends with the same status: the same exit code, or killed by the same signal (without a core
file). Standard library only: the launchers run as scripts with ``python -I -S``.
"""

from __future__ import annotations

import _signal as signal  # type: ignore[import-not-found]  # ``signal`` imports enum: ms per command
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

GROUP_SIGNALS: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
INHERITED_IGNORES: tuple[int, ...] = (signal.SIGPIPE, signal.SIGXFSZ)
"""Signals Python ignores at start; a command must get them with their default action."""


def ignore_group_signals() -> None:
    """In the launcher: leave the group's signals to the child."""
    for number in GROUP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)


def default_signals() -> None:
    """In the child, before ``exec``: the default actions Python changed."""
    for number in INHERITED_IGNORES:
        signal.signal(number, signal.SIG_DFL)


def end_like(status: int) -> NoReturn:
    """Exit with the child's wait ``status``: its exit code, or its signal."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        except (ImportError, OSError, ValueError):
            pass
        signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status))
