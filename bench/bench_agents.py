"""Application-layer costs: agent discovery + compile, and the AGENTS.md hook per request.

Method: write N agent Markdown files (half Work, half Coding) into a temporary repository and
time ``load_catalog`` + ``compile_agent_config`` of every agent (the work a run, ``agents list``
and ``agents show`` do), median of 20 rounds. Then build a session log of E ``tool.started``
events touching files in nested folders with ``AGENTS.md`` files and time one
``WorkspaceInstructionsHook`` call per request while the log grows to E events (the mean
per-request cost), for growing E.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from protoagent.agents.compile import compile_agent_config
from protoagent.agents.roster import load_catalog
from protoagent.events import MemoryStore, SessionLog, new_session_id
from protoagent.hooks.workspace_instructions import WorkspaceInstructionsHook
from protoagent.models.types import ModelRequest


def _median_ms(fn: object, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bench_catalog(root: Path, count: int) -> float:
    agents = root / f"r{count}" / ".protoagent" / "agents"
    (agents / "coding").mkdir(parents=True)
    for i in range(count):
        folder = agents / "coding" if i % 2 else agents
        (folder / f"agent-{i}.md").write_text(
            f"---\ndescription: agent number {i}\ntools: [read_file]\nx-extra: {i}\n---\nPrompt {i}.\n"
        )

    def run() -> None:
        catalog = load_catalog(root / f"r{count}", None)
        for definition in catalog.definitions:
            compile_agent_config(definition)

    return _median_ms(run, 20)


def bench_hook(root: Path, events: int) -> float:
    repo = root / f"h{events}"
    for depth in range(4):
        folder = repo.joinpath(*[f"d{d}" for d in range(depth)])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "AGENTS.md").write_text(f"rules for depth {depth}\n" * 20)
    log = SessionLog(MemoryStore(), new_session_id())
    log.append("session.created", {"preset": "p", "model": "m", "root": str(repo), "approval_policy": "auto"})
    for i in range(events):
        path = "/".join(f"d{d}" for d in range(i % 4)) + f"/f{i}.py"
        log.append("tool.started", {"call_id": f"c{i}", "tool": "read_file", "arguments": {"path": path}})
    # A session as it grows: each request sees the whole log, one event longer than before.
    hook = WorkspaceInstructionsHook([repo])
    request = ModelRequest(system="You are the Architect.", messages=())
    events = log.events
    spent = 0.0
    for n in range(2, len(events) + 1):
        window = events[:n]
        start = time.perf_counter()
        hook(request, window)
        spent += time.perf_counter() - start
    return spent / (len(events) - 1) * 1000


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for count in (10, 100, 400):
            print(f"load_catalog + compile, {count:>4} agent files: {bench_catalog(root, count):8.2f} ms")
        for events in (100, 1000, 5000):
            print(f"AGENTS.md hook, mean per request up to {events:>5} events: {bench_hook(root, events):8.3f} ms")


if __name__ == "__main__":
    main()
