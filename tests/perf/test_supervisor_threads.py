"""Supervisor threads are reused when idle, never shared by two running jobs, and survive errors."""

from __future__ import annotations

import os
import threading
import time

import pytest

from protoagent.processes.supervisors import SupervisorThreads


def run_and_wait(pool: SupervisorThreads) -> str:
    names: list[str] = []
    done = threading.Event()

    def record() -> None:
        names.append(threading.current_thread().name)
        done.set()

    pool.run(record)
    assert done.wait(5)
    return names[0]


def settle(pool: SupervisorThreads, idle: int) -> None:
    deadline = time.monotonic() + 5
    while pool._idle != idle and time.monotonic() < deadline:
        time.sleep(0.001)
    assert pool._idle == idle


def test_an_idle_supervisor_thread_is_reused() -> None:
    pool = SupervisorThreads()
    first = run_and_wait(pool)
    settle(pool, 1)
    assert run_and_wait(pool) == first


def test_jobs_that_run_at_the_same_time_each_get_their_own_thread() -> None:
    pool = SupervisorThreads()
    release = threading.Event()
    started: list[str] = []
    lock = threading.Lock()

    def blocking() -> None:
        with lock:
            started.append(threading.current_thread().name)
        release.wait(5)

    for _ in range(4):
        pool.run(blocking)
    deadline = time.monotonic() + 5
    while len(started) < 4 and time.monotonic() < deadline:
        time.sleep(0.001)
    assert len(set(started)) == 4  # no job waited behind another
    release.set()
    settle(pool, 4)


def test_idle_threads_exit_after_the_idle_timeout_and_new_jobs_still_run() -> None:
    pool = SupervisorThreads(idle_exit_s=0.05)
    run_and_wait(pool)
    settle(pool, 1)
    settle(pool, 0)
    assert run_and_wait(pool).startswith("protoagent-supervisor-")


def test_a_failing_job_is_reported_and_the_thread_stays_usable(monkeypatch: pytest.MonkeyPatch) -> None:
    reported: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: reported.append(args.exc_value))
    pool = SupervisorThreads()

    def explode() -> None:
        raise RuntimeError("boom")

    pool.run(explode)
    settle(pool, 1)
    assert [str(e) for e in reported] == ["boom"]
    run_and_wait(pool)


def test_a_forked_child_starts_its_own_supervisor_threads() -> None:
    pool = SupervisorThreads()
    run_and_wait(pool)
    settle(pool, 1)
    os.register_at_fork(after_in_child=pool.reset_after_fork)
    pid = os.fork()
    if pid == 0:  # the child: the parent's parked thread does not exist here
        done = threading.Event()
        pool.run(done.set)
        os._exit(0 if done.wait(5) else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
