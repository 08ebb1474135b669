"""``ManagedProcess.wait`` is woken by the process's exit, on whichever event loop waits."""

from __future__ import annotations

import asyncio
import selectors
import sys
import threading
from pathlib import Path

from protoagent.processes.command import CommandRequest, CommandSite, prepare_command
from protoagent.processes.runner import ManagedProcess, ProcessRegistry


def start(registry: ProcessRegistry, tmp_path: Path, code: str) -> ManagedProcess:
    site = CommandSite(tmp_path, tmp_path / "home", sys.executable)
    command = prepare_command(CommandRequest([sys.executable, "-c", code], ".", {}, 30.0, 4096), site)
    return registry.start(command, artifacts_dir=tmp_path / "artifacts", label="test", listed=True)


def test_wait_returns_when_the_process_exits(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    process = start(registry, tmp_path, "import time; time.sleep(0.2)")
    assert asyncio.run(process.wait(None)) is True
    assert not process.running and process.state().exit_code == 0
    assert asyncio.run(process.wait(0)) is True
    assert process._waiters == []


def test_wait_with_a_timeout_returns_false_and_leaves_no_waiter_behind(tmp_path: Path) -> None:
    registry = ProcessRegistry(grace_s=0.5)
    process = start(registry, tmp_path, "import time; time.sleep(30)")
    try:
        assert asyncio.run(process.wait(0.05)) is False
        assert process.running and process._waiters == []
    finally:
        registry.shutdown()
    assert not process.running


def test_a_cancelled_wait_leaves_no_waiter_behind(tmp_path: Path) -> None:
    registry = ProcessRegistry(grace_s=0.5)
    process = start(registry, tmp_path, "import time; time.sleep(30)")

    async def cancel_a_wait() -> None:
        task = asyncio.create_task(process.wait(None))
        await asyncio.sleep(0.05)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        assert task.cancelled()

    try:
        asyncio.run(cancel_a_wait())
        assert process._waiters == []
    finally:
        registry.shutdown()


def test_waiters_on_several_event_loops_are_all_woken_by_one_exit(tmp_path: Path) -> None:
    registry = ProcessRegistry()
    process = start(registry, tmp_path, "import time; time.sleep(0.3)")
    results: list[bool] = []

    def wait_in_own_loop() -> None:
        results.append(asyncio.run(process.wait(10)))

    threads = [threading.Thread(target=wait_in_own_loop) for _ in range(3)]
    for thread in threads:
        thread.start()

    async def main_wait() -> bool:
        return await process.wait(10)

    results.append(asyncio.run(main_wait()))
    for thread in threads:
        thread.join(10)
    assert results == [True, True, True, True]
    assert not process.running and process._waiters == []


def test_terminate_wakes_the_waiter_when_the_group_is_stopped(tmp_path: Path) -> None:
    registry = ProcessRegistry(grace_s=1.0)
    process = start(registry, tmp_path, "import time; time.sleep(30)")

    async def stop() -> bool:
        await process.terminate()
        return await process.wait(0)

    assert asyncio.run(stop()) is True
    state = process.state()
    assert not state.running and state.terminated and state.exit_code is not None and state.exit_code < 0


class CountingSelector(selectors.DefaultSelector):
    """Counts how often the event loop went to sleep waiting for I/O or a timer."""

    sleeps = 0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None or timeout > 0:
            self.sleeps += 1
        return super().select(timeout)


def test_waiting_for_a_process_does_not_poll(tmp_path: Path) -> None:
    """A 0.3 s process used to cost a dozen or more sleeps of the loop (polling with a back-off
    up to 25 ms); woken by the exit, the loop sleeps once until the process is done."""
    registry = ProcessRegistry()
    process = start(registry, tmp_path, "import time; time.sleep(0.3)")
    selector = CountingSelector()
    loop = asyncio.SelectorEventLoop(selector)
    try:
        assert loop.run_until_complete(process.wait(10)) is True
    finally:
        loop.close()
    assert not process.running
    assert selector.sleeps <= 2
