"""Supervisor threads, reused: every command gets its own thread, but an idle one is reused
instead of starting a new one.

Starting a thread makes the caller wait until the new thread runs, which costs a context
switch per command and far more on a loaded machine; handing a job to a parked thread only
queues it. A thread takes a new job only when it is idle, so a supervisor never waits behind
another process's supervision, and timeouts hold for every process at once.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable
from itertools import count

IDLE_EXIT_S = 30.0
"""Seconds an idle supervisor thread stays parked before it exits."""

Job = Callable[[], None]


class SupervisorThreads:
    """Runs each job on its own thread at once: a parked idle thread when there is one, else a
    new daemon thread."""

    def __init__(self, idle_exit_s: float = IDLE_EXIT_S) -> None:
        self.idle_exit_s = idle_exit_s
        self._lock = threading.Lock()
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        self._idle = 0
        self._names = count(1)

    def run(self, job: Job) -> None:
        with self._lock:
            reuse = self._idle > 0
            if reuse:
                self._idle -= 1  # that parked thread is now reserved for this job
        self._jobs.put(job)
        if not reuse:
            name = f"protoagent-supervisor-{next(self._names)}"
            threading.Thread(target=self._work, name=name, daemon=True).start()

    def reset_after_fork(self) -> None:
        """A forked child has none of the parent's threads: forget the parked ones."""
        self._lock = threading.Lock()
        self._jobs = queue.SimpleQueue()
        self._idle = 0

    def _work(self) -> None:
        while True:
            try:
                job = self._jobs.get(timeout=self.idle_exit_s)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0 and self._jobs.empty():
                        self._idle -= 1
                        return
                continue  # a job was queued for this thread just as it timed out
            _run_reporting(job)
            with self._lock:
                self._idle += 1


def _run_reporting(job: Job) -> None:
    """Run ``job``; an unexpected error is reported like an uncaught thread error, and the
    thread stays usable."""
    try:
        job()
    except Exception:
        kind, value, trace = sys.exc_info()
        threading.excepthook(threading.ExceptHookArgs((kind, value, trace, threading.current_thread())))


SUPERVISORS = SupervisorThreads()
"""The process-wide supervisor threads of every ``ProcessRegistry``."""
os.register_at_fork(after_in_child=SUPERVISORS.reset_after_fork)
