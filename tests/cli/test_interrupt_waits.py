"""A stop signal ends ``protoagent run`` wherever the run is waiting: on a model server that never
answers or streams without end, and on a long check. The CLI exits with 128 + the signal, the
session log ends with ``run.ended`` cancelled, no process of the check survives, and a worker
thread still inside native code does not hold the exit. Everything
is real: the CLI in a subprocess, a loopback HTTP server, the check's command in the sandbox.
Speed lives in bench/bench_interrupt.py; here only a generous bound catches a wait that ignores
the signal."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

EXE = [sys.executable, "-m", "protoagent"]
STOP_BOUND_S = 5.0
CHUNK = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "la "}}]}
CHECK_SCRIPT = """\
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", sys.argv[1]])
open("check.started", "w").write("started")
time.sleep(120)
"""


class SlowModelServer:
    """A chat-completions server on loopback: ``hang`` takes the request and never answers,
    otherwise it streams a token every half second without end."""

    def __init__(self, hang: bool) -> None:
        self.requested = threading.Event()
        self._closing = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.requested.set()
                if hang:
                    owner._closing.wait(120)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    while not owner._closing.wait(0.5):
                        self.wfile.write(f"data: {json.dumps(CHUNK)}\n\n".encode())
                        self.wfile.flush()
                except OSError:
                    return

            def log_message(self, *args: object) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def model_server() -> Iterator[Callable[[bool], SlowModelServer]]:
    servers: list[SlowModelServer] = []

    def start(hang: bool) -> SlowModelServer:
        servers.append(SlowModelServer(hang))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def environment(home: Path) -> dict[str, str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    env.pop("PROTOAGENT_STORE", None)
    return env


def start_run(home: Path, repo: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*EXE, "run", *args, "--repo", str(repo), "--approval", "auto", "--surface", "editing", "--json", "go"],
        env=environment(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(ready: Callable[[], bool], proc: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + 90
    while not ready():
        if proc.poll() is not None:
            pytest.fail(f"the run ended before {what}: {proc.communicate()[1]}")
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.02)


def stop(proc: subprocess.Popen[str], signum: signal.Signals) -> tuple[float, str]:
    """Send ``signum``; the seconds until the CLI exited and its stderr."""
    sent = time.monotonic()
    proc.send_signal(signum)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return time.monotonic() - sent, err


def last_run_ended(home: Path) -> dict[str, object]:
    def cli(*args: str) -> object:
        done = subprocess.run(
            [*EXE, "sessions", *args, "--json"], env=environment(home), capture_output=True, text=True
        )
        return json.loads(done.stdout)

    listed = cli("list")
    assert isinstance(listed, list) and listed, "no session was recorded"
    shown = cli("show", listed[-1]["session_id"])
    assert isinstance(shown, dict)
    events = shown["events"]
    assert events[-1]["type"] == "run.ended", [e["type"] for e in events]
    return dict(events[-1]["payload"])


def processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize(
    ("hang", "signum"),
    [(True, signal.SIGINT), (False, signal.SIGTERM)],
    ids=["hanging-server-SIGINT", "streaming-server-SIGTERM"],
)
def test_stop_signal_during_a_server_request_exits_at_once_and_logs_cancelled(
    tmp_path: Path, model_server: Callable[[bool], SlowModelServer], hang: bool, signum: signal.Signals
) -> None:
    server = model_server(hang)
    repo = make_repo(tmp_path / "repo", {"a.py": "x = 1\n"})
    proc = start_run(tmp_path / "home", repo, "--model", f"openai-compatible:{server.url}#slow")
    wait_for(server.requested.is_set, proc, "the model request reached the server")
    time.sleep(0.3)
    elapsed, err = stop(proc, signum)
    assert proc.returncode == 128 + signum, err
    assert "interrupted" in err and "Traceback" not in err
    assert elapsed < STOP_BOUND_S
    assert last_run_ended(tmp_path / "home")["status"] == "cancelled"


def test_sigint_during_a_long_check_exits_130_logs_cancelled_and_leaves_no_process(tmp_path: Path) -> None:
    marker = f"interrupted-check-{secrets.token_hex(6)}"
    check = {"id": "slow", "argv": [sys.executable, "slow_check.py", marker]}
    files = {".protoagent/project.json": json.dumps({"checks": [check]}), "slow_check.py": CHECK_SCRIPT}
    repo = make_repo(tmp_path / "repo", files)
    turns = [tool_turn("run_check", role="architect", check_id="slow", phase="baseline"), final_turn("done")]
    script = write_script(tmp_path / "turns.jsonl", turns)
    proc = start_run(tmp_path / "home", repo, "--model", f"scripted:{script}")
    try:
        wait_for((repo / "check.started").exists, proc, "the check started")
        assert processes_with(marker), "the check's child is not running"
        elapsed, err = stop(proc, signal.SIGINT)
        time.sleep(0.2)
        left = processes_with(marker)
    finally:
        proc.kill()
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err
    assert elapsed < STOP_BOUND_S
    assert left == []
    assert last_run_ended(tmp_path / "home")["status"] == "cancelled"


WORKER_STILL_BUSY = """
import asyncio, os, signal, time
from protoagent.interfaces.cli.signals import Interrupted, leave_if_stopped, run_until_signalled

async def work() -> None:
    asyncio.get_running_loop().call_later(0.2, os.kill, os.getpid(), signal.SIGINT)
    await asyncio.to_thread(time.sleep, 60)  # stands for native model code between two checks

try:
    run_until_signalled(work())
except Interrupted as stop:
    print("interrupted", flush=True)
    leave_if_stopped(stop.exit_code)
"""


def test_a_stop_signal_does_not_wait_for_a_worker_thread_still_at_work(tmp_path: Path) -> None:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", WORKER_STILL_BUSY], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert (done.returncode, done.stdout.strip()) == (130, "interrupted"), done.stderr
    assert time.monotonic() - started < 30  # the worker would have held the exit for 60 s
