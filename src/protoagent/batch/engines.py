"""Engines fan tasks out: a local process pool, or Ray (a local instance or a cluster).

Both call ``on_result`` once per task, in completion order, in the driver process. A task whose
worker process is lost (killed, out of memory) is run again up to ``retries`` times; only the
attempt that finishes is counted, so a task never counts twice. On Ctrl-C (SIGINT) an engine
interrupts its workers, so their runs record ``run.ended`` 'cancelled', and re-raises.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, Protocol

from protoagent.batch.execute import WorkerSetup, run_one
from protoagent.batch.tasks import BatchTask
from protoagent.errors import ConfigError

OnResult = Callable[[dict[str, Any]], None]
_INTERRUPT_GRACE_S = 5.0


class Engine(Protocol):
    def run(self, tasks: Sequence[BatchTask], setup: WorkerSetup, on_result: OnResult) -> None: ...


def lost_row(task: BatchTask, reason: str) -> dict[str, Any]:
    """The row of a task whose every attempt lost its worker."""
    return {"id": task.id, "status": "error", "error": reason, "expect_held": False if task.expect else None}


@dataclass(slots=True)
class LocalEngine:
    """A pool of ``workers`` processes on this machine (spawned, so no thread state is forked)."""

    workers: int
    retries: int = 1

    def run(self, tasks: Sequence[BatchTask], setup: WorkerSetup, on_result: OnResult) -> None:
        attempts = dict.fromkeys((t.id for t in tasks), 0)
        pending = list(tasks)
        while pending:
            pending = self._one_pool(pending, setup, on_result, attempts)

    def _one_pool(
        self, tasks: list[BatchTask], setup: WorkerSetup, on_result: OnResult, attempts: dict[str, int]
    ) -> list[BatchTask]:
        """Run ``tasks`` in a fresh pool; return the ones to run again after a worker was lost."""
        context = multiprocessing.get_context("spawn")
        pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=context)
        futures: dict[Future[dict[str, Any]], BatchTask] = {}
        again: list[BatchTask] = []
        try:
            for task in tasks:
                attempts[task.id] += 1
                futures[pool.submit(run_one, task.model_dump(), setup)] = task
            while futures:
                done, _ = wait(futures, return_when=FIRST_COMPLETED)
                for future in done:
                    task = futures.pop(future)
                    try:
                        on_result(future.result())
                    except BrokenProcessPool:
                        if attempts[task.id] <= self.retries:
                            again.append(task)
                        else:
                            on_result(lost_row(task, "the worker process was lost on every attempt"))
        except KeyboardInterrupt:
            _interrupt_children()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
        return again


def _interrupt_children() -> None:
    """SIGINT every worker so its run ends 'cancelled'; SIGKILL what is left after a grace period."""
    children = multiprocessing.active_children()
    for child in children:
        if child.pid is not None:
            _signal(child.pid, signal.SIGINT)
    deadline = time.monotonic() + _INTERRUPT_GRACE_S
    for child in children:
        child.join(max(0.0, deadline - time.monotonic()))
        if child.is_alive() and child.pid is not None:
            _signal(child.pid, signal.SIGKILL)


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


@dataclass(slots=True)
class RayEngine:
    """Each task is a Ray task with ``cpus_per_task`` CPUs; Ray re-runs it when its worker dies.

    ``address`` None starts a local Ray instance for the run (with ``workers`` CPUs) and stops it
    at the end; an address (``ray://host:10001`` or ``auto``) joins an existing cluster, whose
    nodes need ProtoAgent installed.
    """

    workers: int
    address: str | None = None
    cpus_per_task: float = 1.0
    retries: int = 2

    def run(self, tasks: Sequence[BatchTask], setup: WorkerSetup, on_result: OnResult) -> None:
        ray = _import_ray()
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        if self.address is None:
            ray.init(
                num_cpus=self.workers,
                include_dashboard=False,
                log_to_driver=False,
                object_store_memory=128 * 1024 * 1024,
            )
        else:
            ray.init(address=self.address, log_to_driver=False)
        try:
            self._gather(ray, tasks, setup, on_result)
        finally:
            ray.shutdown()

    def _gather(self, ray: Any, tasks: Sequence[BatchTask], setup: WorkerSetup, on_result: OnResult) -> None:
        remote = ray.remote(num_cpus=self.cpus_per_task, max_retries=self.retries, retry_exceptions=False)(run_one)
        refs = {remote.remote(task.model_dump(), setup): task for task in tasks}
        try:
            while refs:
                done, _ = ray.wait(list(refs), num_returns=1)
                for ref in done:
                    task = refs.pop(ref)
                    try:
                        on_result(ray.get(ref))
                    except ray.exceptions.RayError as exc:
                        on_result(lost_row(task, f"Ray gave up on the task: {type(exc).__name__}"))
        except KeyboardInterrupt:
            for ref in refs:
                ray.cancel(ref)
            raise


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError("--engine ray needs Ray: pip install 'protoagent[batch]'") from None
    return ray
