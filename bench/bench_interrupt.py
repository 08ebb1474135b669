"""Ctrl-C to exit: how long a run takes to stop after SIGINT, wherever it is waiting.

Interrupts are spread over three kinds of wait, in a shuffled order:

- ``local``: ``protoagent run`` on a copy of the bundled example with the embedded model; SIGINT
  between 2 and 20 s in (model loading, prompt evaluation, generation or a check);
- ``server``: an OpenAI-compatible model on a local HTTP server that either streams a token every
  half second without end or takes the request and never answers; SIGINT 0-2 s after the
  request arrived;
- ``check``: the scripted model runs a repository check whose command sleeps and leaves a child
  in its process group; SIGINT 0-2 s after the check started.

Each interrupt records the time from the signal to the process's exit, its exit code (130
expected), how the session log says the run ended (``cancelled`` expected) and how many of the
check's processes survive. Prints per-kind and overall median and 95th percentile (target: p95
under 1 s).

Run: python bench/bench_interrupt.py [--count 20] [--seed 1] [--kinds local,server,check]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from protoagent.testing import final_turn, make_repo, tool_turn, write_script

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "date-parser"
TARGET_P95_S = 1.0
KINDS = ("local", "server", "check")
START_TIMEOUT_S = 90.0
CHECK_SCRIPT = """\
import subprocess, sys, time
subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)", sys.argv[1]])
open("check.started", "w").write("started")
time.sleep(120)
"""


@dataclass(frozen=True)
class Outcome:
    kind: str
    latency_s: float
    """Seconds from SIGINT to exit; negative when the run had ended before the signal."""
    exit_code: int
    ended: str
    """The status of the session's ``run.ended`` event, or why there is none."""
    survivors: int


class SlowModelServer:
    """A chat-completions server on loopback that streams forever or never answers."""

    def __init__(self) -> None:
        self.hang = False
        self.requested = threading.Event()
        self.stopping = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.endswith("/chat/completions"):
                    self.do_GET()
                    return
                owner.requested.set()
                if owner.hang:
                    owner.stopping.wait(300)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                delta = {"choices": [{"index": 0, "delta": {"content": "la "}, "finish_reason": None}]}
                chunk = f"data: {json.dumps({'id': 'c', 'object': 'chat.completion.chunk', **delta})}\n\n"
                try:
                    while not owner.stopping.wait(0.5):
                        self.wfile.write(chunk.encode())
                        self.wfile.flush()
                except OSError:
                    return

            def log_message(self, *args: object) -> None:
                return

        return Handler


def environment(home: Path) -> dict[str, str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    env.pop("PROTOAGENT_STORE", None)
    return env


def start_run(args: list[str], repo: Path, home: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "protoagent", "run", *args, "--repo", str(repo), "--approval", "auto", "--json"]
    return subprocess.Popen(
        command,
        env=environment(home),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def interrupt(process: subprocess.Popen[bytes]) -> tuple[float, int]:
    """SIGINT, then the seconds until the process has exited (-1 if it had already)."""
    if process.poll() is not None:
        return -1.0, process.returncode
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return time.monotonic() - sent, process.returncode


def wait_until(ready: Callable[[], bool], process: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + START_TIMEOUT_S
    while not ready():
        if process.poll() is not None or time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def run_ended(home: Path) -> str:
    """How the newest session's log says the run ended."""
    env = environment(home)
    cli = [sys.executable, "-m", "protoagent", "sessions"]
    listed = subprocess.run([*cli, "list", "--json"], env=env, capture_output=True, text=True, check=False)
    sessions = json.loads(listed.stdout or "[]")
    if not sessions:
        return "no session (stopped before it began)"
    shown = subprocess.run(
        [*cli, "show", sessions[-1]["session_id"], "--json"], env=env, capture_output=True, text=True, check=False
    )
    ended = [e for e in json.loads(shown.stdout)["events"] if e["type"] == "run.ended"]
    return str(ended[-1]["payload"]["status"]) if ended else "no run.ended"


def survivors(marker: str) -> int:
    """Processes whose command line carries ``marker`` (a check's children), 0.2 s after exit."""
    time.sleep(0.2)
    count = 0
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                count += 1
        except OSError:
            continue
    return count


def local_interrupt(tmp: Path, rng: random.Random) -> Outcome:
    work = tmp / "date-parser"
    shutil.copytree(EXAMPLE, work)
    process = start_run(["fix the failing date parser test"], work, tmp / "home")
    time.sleep(rng.uniform(2.0, 20.0))
    latency, code = interrupt(process)
    return Outcome("local", latency, code, run_ended(tmp / "home"), 0)


def server_interrupt(tmp: Path, rng: random.Random) -> Outcome:
    server = SlowModelServer()
    server.hang = rng.random() < 0.5
    try:
        repo = make_repo(tmp / "repo", {"a.py": "x = 1\n"})
        model = f"openai-compatible:{server.url}#slow"
        process = start_run(["--model", model, "--surface", "editing", "make x two"], repo, tmp / "home")
        if wait_until(server.requested.is_set, process):
            time.sleep(rng.uniform(0.0, 2.0))
        latency, code = interrupt(process)
    finally:
        server.close()
    kind = "server (hangs)" if server.hang else "server (streams)"
    return Outcome(kind, latency, code, run_ended(tmp / "home"), 0)


def check_interrupt(tmp: Path, rng: random.Random) -> Outcome:
    marker = f"bench-check-{secrets.token_hex(6)}"
    check = {"id": "slow", "argv": [sys.executable, "slow_check.py", marker]}
    files = {".protoagent/project.json": json.dumps({"checks": [check]}), "slow_check.py": CHECK_SCRIPT}
    repo = make_repo(tmp / "repo", files)
    turns = [tool_turn("run_check", role="architect", check_id="slow", phase="baseline"), final_turn("done")]
    script = write_script(tmp / "turns.jsonl", turns)
    process = start_run(["--model", f"scripted:{script}", "--surface", "editing", "fix it"], repo, tmp / "home")
    if wait_until((repo / "check.started").exists, process):
        time.sleep(rng.uniform(0.0, 2.0))
    latency, code = interrupt(process)
    return Outcome("check", latency, code, run_ended(tmp / "home"), survivors(marker))


RUNNERS: dict[str, Callable[[Path, random.Random], Outcome]] = {
    "local": local_interrupt,
    "server": server_interrupt,
    "check": check_interrupt,
}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[round(0.95 * (len(ordered) - 1))]


def summary(label: str, latencies: list[float]) -> str:
    if not latencies:
        return f"{label}: none measured"
    median = statistics.median(latencies)
    return f"{label}: {len(latencies)} interrupts; median {median:.3f} s; p95 {p95(latencies):.3f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kinds", default=",".join(KINDS), help="comma-separated: local, server, check")
    args = parser.parse_args()
    kinds = [kind for kind in args.kinds.split(",") if kind]
    unknown = sorted(set(kinds) - set(KINDS))
    if unknown:
        parser.error(f"unknown kinds {unknown}; use {', '.join(KINDS)}")
    rng = random.Random(args.seed)
    order = [kinds[index % len(kinds)] for index in range(args.count)]
    rng.shuffle(order)
    outcomes: list[Outcome] = []
    for index, kind in enumerate(order, 1):
        with tempfile.TemporaryDirectory() as tmp:
            outcome = RUNNERS[kind](Path(tmp), rng)
        if outcome.latency_s < 0:
            print(f"{index:2} {outcome.kind}: the run had ended before the signal (exit {outcome.exit_code})")
            continue
        outcomes.append(outcome)
        print(
            f"{index:2} {outcome.kind}: exited {outcome.latency_s:.3f} s after SIGINT with {outcome.exit_code}; "
            f"run.ended {outcome.ended}; {outcome.survivors} surviving processes",
            flush=True,
        )
    if not outcomes:
        print("no interrupt landed in a running run")
        return 1
    for kind in kinds:
        print(summary(kind, [o.latency_s for o in outcomes if o.kind.startswith(kind)]))
    print(summary("overall", [o.latency_s for o in outcomes]) + f" (target p95 < {TARGET_P95_S:.0f} s)")
    codes = sorted({o.exit_code for o in outcomes})
    ended = sorted({o.ended for o in outcomes})
    print(f"exit codes {codes}; run.ended {ended}; surviving processes {sum(o.survivors for o in outcomes)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
