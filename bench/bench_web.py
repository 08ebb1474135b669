"""Web UI figures: event append → SSE delivery latency, and page load of a 2,000-event session.

Method
------
1. Append → SSE delivery: a real uvicorn server on loopback (in a thread, SQLite store) streams
   one session to an httpx client reading ``/api/sessions/{id}/stream`` in another thread. The
   bench appends 500 ``model.delta`` events to that session's ``SessionLog`` (validation, the
   SQLite write, the hub's hand-off to the server loop, SSE framing, the socket, the client's
   line parsing); each latency is the client's receipt time minus the time just before
   ``append``. One event is in flight at a time. We print the median, p95 and max. Target: p95
   < 20 ms.
2. Page load: a 2,000-event session (turns of user message, streamed deltas, model completion,
   tool start, approval request/decision and tool end with a diff) is written to the store.
   Debian's headless Chromium (Playwright, ``executable_path``) opens ``/sessions/{id}`` and we
   time from navigation start to the moment the page has folded event 2,000 into the view
   (``body[data-last-seq=2000]``). Median and max over 5 loads with a fresh page each. Target:
   < 1 s. Skipped with a note when chromium is missing. We also print the page's height
   (``scrollHeight`` at 1200×900): tool cards are one collapsed line each, so it grows by about
   one line per call, not by each call's output.
"""

from __future__ import annotations

import functools
import secrets
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

from protoagent.events import SessionLog, SQLiteStore
from protoagent.interfaces.web.hub import RunHub
from protoagent.interfaces.web.routes import create_app
from protoagent.interfaces.web.server import web_config

DELIVERIES = 500
PAGE_EVENTS = 2000
TOKEN = secrets.token_urlsafe(24)
AUTH = {"Authorization": f"Bearer {TOKEN}"}
PAGE_LOADS = 5


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(root: Path, store: SQLiteStore, hub: RunHub) -> tuple[uvicorn.Server, str]:
    port = free_port()
    app = create_app(web_config("127.0.0.1", TOKEN, [root]), store, hub)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, f"http://127.0.0.1:{port}"


def new_log(store: SQLiteStore, session_id: str, root: Path) -> SessionLog:
    log = SessionLog(store, session_id)
    log.append("session.created", {"preset": "bench", "model": "scripted", "root": str(root), "approval_policy": "ask"})
    return log


def sse_delivery(url: str, store: SQLiteStore, hub: RunHub, root: Path) -> list[float]:
    log = new_log(store, "s_bench_sse", root)
    log.subscribe(hub.publish)
    received: dict[int, float] = {}
    arrived = threading.Condition()

    def read() -> None:
        with (
            httpx.Client(timeout=60, headers=AUTH) as client,
            client.stream("GET", f"{url}/api/sessions/s_bench_sse/stream") as r,
        ):
            for line in r.iter_lines():
                if line.startswith("id: "):
                    with arrived:
                        received[int(line[4:])] = time.perf_counter()
                        arrived.notify_all()
                    if int(line[4:]) == DELIVERIES + 1:
                        return

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    with arrived:
        arrived.wait_for(lambda: 1 in received, timeout=10)
    latencies = []
    for i in range(DELIVERIES):
        sent = time.perf_counter()
        seq = log.append("model.delta", {"text": f"token {i} "}).seq
        with arrived:
            if not arrived.wait_for(functools.partial(received.__contains__, seq), timeout=10):
                raise RuntimeError(f"event {seq} never arrived on the stream")
        latencies.append((received[seq] - sent) * 1000)
    reader.join(10)
    return latencies


def write_big_session(store: SQLiteStore, root: Path) -> str:
    log = new_log(store, "s_bench_page", root)
    turn = 0
    diff = "--- a/dates.py\n+++ b/dates.py\n@@ -1,3 +1,3 @@\n def f():\n-    return 1\n+    return 2\n"
    while len(log) + 10 <= PAGE_EVENTS:
        turn += 1
        call = f"call_{turn}"
        log.append("user.message", {"text": f"step {turn}: look at dates.py"})
        for word in ("Reading ", "the ", "file ", "now."):
            log.append("model.delta", {"text": word})
        log.append("model.completed", {"text": "Reading the file now.", "tool_calls": []})
        log.append("tool.started", {"call_id": call, "tool": "edit_file", "arguments": {"path": "dates.py"}})
        log.append("approval.requested", {"call_id": call, "tool": "edit_file", "effect": "write", "preview": diff})
        log.append(
            "approval.decided",
            {"call_id": call, "tool": "edit_file", "decision": "allow", "source": "answerer", "reason": "ok"},
        )
        log.append("tool.ended", {"call_id": call, "tool": "edit_file", "status": "ok", "output": "edited dates.py"})
    while len(log) < PAGE_EVENTS:
        log.append("model.delta", {"text": "."})
    return log.session_id


def page_loads(url: str, session_id: str, last_seq: int) -> tuple[list[float], int] | None:
    chromium = shutil.which("chromium")
    if chromium is None:
        return None
    from playwright.sync_api import sync_playwright

    args = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"]  # fmt: skip
    timings = []
    height = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=args)
        for _ in range(PAGE_LOADS + 1):
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            started = time.perf_counter()
            page.goto(f"{url}/sessions/{session_id}?token={TOKEN}")  # sets the token cookie
            page.wait_for_selector(f"body[data-last-seq='{last_seq}']", timeout=30_000)
            timings.append((time.perf_counter() - started) * 1000)
            height = int(page.evaluate("document.documentElement.scrollHeight"))
            page.close()
        browser.close()
    return timings[1:], height  # the first load also starts the renderer process


def session_id_calls(store: SQLiteStore, session_id: str) -> int:
    return sum(1 for e in store.load(session_id) if e.type == "tool.started")


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        store = SQLiteStore(root / "sessions.sqlite")
        hub = RunHub()
        server, url = start_server(root, store, hub)
        try:
            latencies = sse_delivery(url, store, hub, root)
            session_id = write_big_session(store, root)
            last_seq = len(store.load(session_id))
            measured = page_loads(url, session_id, last_seq)
        finally:
            server.should_exit = True
        print(f"append → SSE delivery over loopback, {DELIVERIES} events, one in flight:")
        print(
            f"  median {statistics.median(latencies):.2f} ms   p95 {p95(latencies):.2f} ms   "
            f"max {max(latencies):.2f} ms   (target p95 < 20 ms)"
        )
        if measured is None:
            print("page load: skipped (Debian's chromium is not installed)")
        else:
            loads, height = measured
            print(f"page load of a {last_seq}-event session in headless Chromium, {PAGE_LOADS} loads:")
            print(f"  median {statistics.median(loads):.0f} ms   max {max(loads):.0f} ms   (target < 1000 ms)")
            print(f"  page height {height} px for its {session_id_calls(store, session_id)} tool calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
