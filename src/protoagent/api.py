"""The Python SDK, its one module: open the session store, run an objective, watch its events,
answer approvals with a plain callback and read sessions and reports back. Interfaces (CLI, web,
ACP) reach the runtime through it too. Heavy parts load on first use, so the CLI starts fast.

Run an objective and iterate its events (the scripted model stands in for a real one here):

>>> import asyncio, tempfile
>>> from pathlib import Path
>>> from protoagent import MemoryStore, RunOptions, stream_run
>>> from protoagent.testing import final_turn, make_repo, write_script
>>> folder = Path(tempfile.mkdtemp())
>>> repo = make_repo(folder / "repo", {"notes.md": "hello\\n"}, git=False)
>>> script = write_script(folder / "turns.jsonl", [final_turn("Hello!", role="architect")])
>>> options = RunOptions(repo=repo, model=f"scripted:{script}", store=MemoryStore(), surface="conversation")
>>> async def watch(objective, options):
...     run = stream_run(objective, options)
...     types = [event.type async for event in run]
...     return types[0], types[-1], await run.report()
>>> first, last, report = asyncio.run(watch("say hello", options))
>>> first, last, report.status, report.summary
('session.created', 'run.ended', 'completed', 'Hello!')

Resume that session with a new message: same session, same mode, workspace and task record:

>>> from dataclasses import replace
>>> more = write_script(folder / "more.jsonl", [final_turn("Hello again!", role="architect")])
>>> again = replace(options, model=f"scripted:{more}", resume=report.session_id)
>>> first, last, resumed = asyncio.run(watch("once more", again))
>>> first, resumed.session_id == report.session_id, resumed.summary
('session.resumed', True, 'Hello again!')

Open one Coding session over several repositories: ``repo`` is the primary (relative paths,
commands and checks), and a file in another is named by its absolute path:

>>> other = make_repo(folder / "other", {"shared.md": "shared\\n"}, git=False)
>>> script = write_script(folder / "multi.jsonl", [final_turn("Two repositories.", role="architect")])
>>> multi = replace(options, model=f"scripted:{script}", resume=None, extra_repos=(other,))
>>> first, last, report = asyncio.run(watch("what is shared?", multi))
>>> first, report.summary
('session.created', 'Two repositories.')

Answer approvals with a callback, then read the report back from the store:

>>> from protoagent import ApprovalAnswer, approval_callback, read_report, run_task
>>> asked = []
>>> def approve(request):
...     asked.append(request.tool)
...     return ApprovalAnswer.once()
>>> options = RunOptions(repo=repo, model="none", store=MemoryStore(), answerer=approval_callback(approve))
>>> report = asyncio.run(run_task("!echo hi", options))
>>> asked, report.status
(['shell'], 'completed')
>>> read_report(report.session_id, options.store)["status"]
'completed'

Summarize a long session's conversation so far (``/compact`` in chat); the next message
follows the summary. Without a model the summary is a deterministic digest of the log:

>>> from protoagent import compact_session
>>> compacted = asyncio.run(compact_session(resumed.session_id, again.store, focus="the greeting"))
>>> compacted.compacted, compacted.method, compacted.turns
(True, 'deterministic', (1, 2))

Without an event loop of your own, ``run_sync`` runs to the end and returns the same report:

>>> from protoagent import run_sync
>>> hello = write_script(folder / "sync.jsonl", [final_turn("Hello, synchronously!", role="architect")])
>>> plain = RunOptions(repo=repo, model=f"scripted:{hello}", store=MemoryStore(), surface="conversation")
>>> run_sync("say hello", plain).summary
'Hello, synchronously!'
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from protoagent.agents.modes import SessionFacts as SessionFacts
from protoagent.agents.modes import check_resume as check_resume
from protoagent.agents.modes import default_mode as default_mode
from protoagent.agents.modes import session_facts as session_facts
from protoagent.agents.service import agent_listing as agent_listing
from protoagent.agents.service import agent_notices as agent_notices
from protoagent.agents.service import list_agents as list_agents
from protoagent.agents.service import set_agent_enabled as set_agent_enabled
from protoagent.agents.service import show_agent as show_agent
from protoagent.agents.service import trust_agent as trust_agent
from protoagent.agents.service import untrusted_in_team as untrusted_in_team
from protoagent.agents.service import validate_agents as validate_agents
from protoagent.errors import ConfigError
from protoagent.events.sqlite_store import SQLiteStore
from protoagent.events.store import SessionStore
from protoagent.events.stores import ClosableStore, open_store_at
from protoagent.events.types import Event
from protoagent.private_files import PRIVATE_DIR_MODE, tighten
from protoagent.processes.reaper import become_subreaper as become_subreaper
from protoagent.processes.reaper import stop_descendants as stop_descendants
from protoagent.processes.sandbox import SANDBOX_MODES as SANDBOX_MODES
from protoagent.processes.sandbox import sandbox_notice as sandbox_notice
from protoagent.processes.sandbox import select_sandbox as select_sandbox
from protoagent.settings import HOME_ENV as HOME_ENV
from protoagent.settings import data_home as data_home
from protoagent.settings import environment
from protoagent.tools.approvals import Answerer, ApprovalAnswer, ApprovalRequest

if TYPE_CHECKING:
    from protoagent.context.session_compaction import CompactResult as CompactResult
    from protoagent.context.session_compaction import compact_session as compact_session
    from protoagent.workflow.changes import session_changes as session_changes
    from protoagent.workflow.changes import unified_diff as unified_diff
    from protoagent.workflow.checkpoints import RewindPlan as RewindPlan
    from protoagent.workflow.checkpoints import RewindRefused as RewindRefused
    from protoagent.workflow.checkpoints import fork_session as fork_session
    from protoagent.workflow.checkpoints import rewind_session as rewind_session
    from protoagent.workflow.run import RunOptions, RunReport

_LAZY = {
    "CompactResult": "protoagent.context.session_compaction",
    "compact_session": "protoagent.context.session_compaction",
    "session_changes": "protoagent.workflow.changes",
    "unified_diff": "protoagent.workflow.changes",
    "RewindPlan": "protoagent.workflow.checkpoints",
    "RewindRefused": "protoagent.workflow.checkpoints",
    "fork_session": "protoagent.workflow.checkpoints",
    "rewind_session": "protoagent.workflow.checkpoints",
}
"""Names this module re-exports from the workflow, loaded on first use."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'protoagent.api' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


STORE_FILE = "sessions.sqlite"


def open_store(home: Path | None = None, location: str | None = None) -> ClosableStore:
    """The session store: ``location``, else ``$PROTOAGENT_STORE`` (a ``postgresql://`` URL or a
    SQLite path), else the SQLite file under the data home."""
    chosen = location or environment().store
    if chosen:
        return open_store_at(chosen)
    folder = home or data_home()
    if folder.is_dir():
        tighten(folder, PRIVATE_DIR_MODE)  # a data home made before it was private
    return SQLiteStore(folder / STORE_FILE)


def load_session(session_id: str, store: SessionStore | None = None) -> list[Event]:
    """The events of one session, in order (refusing a log that does not validate)."""
    return (store or open_store()).load(session_id)


ApprovalCallback = Callable[[ApprovalRequest], "ApprovalAnswer | bool | Awaitable[ApprovalAnswer | bool]"]
"""What ``approval_callback`` accepts: sync or async, returning an answer or a plain yes/no."""


def approval_callback(callback: ApprovalCallback) -> Answerer:
    """An answerer from a plain function: ``True`` allows once, ``False`` denies, or return an
    ``ApprovalAnswer`` for the three choices (once, for this session, deny with a reason)."""

    async def answer(request: ApprovalRequest) -> ApprovalAnswer:
        reply = callback(request)
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, ApprovalAnswer):
            return reply
        return (
            ApprovalAnswer.once("approved by the SDK callback")
            if reply
            else ApprovalAnswer.deny("denied by the SDK callback")
        )

    return answer


class RunStream:
    """A run in progress: ``async for event in stream`` yields its events as they are appended;
    ``await stream.report()`` waits for the end. Cancel it with ``stream.cancel()``."""

    def __init__(self, objective: str, options: RunOptions) -> None:
        self._queue: asyncio.Queue[Event | None] = asyncio.Queue()
        watcher = options.on_event

        def on_event(event: Event) -> None:
            if watcher is not None:
                watcher(event)
            self._queue.put_nowait(event)

        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise ConfigError("stream_run needs a running event loop: call it inside an async function") from None
        from protoagent.workflow.run import run_task

        self._task = loop.create_task(run_task(objective, replace(options, on_event=on_event)))
        self._task.add_done_callback(lambda _: self._queue.put_nowait(None))

    def __aiter__(self) -> AsyncIterator[Event]:
        return self._events()

    async def _events(self) -> AsyncIterator[Event]:
        while (event := await self._queue.get()) is not None:
            yield event

    async def report(self) -> RunReport:
        """The run's evidence report (raises what the run raised, e.g. ``ConfigError``)."""
        return await self._task

    def cancel(self) -> None:
        """Stop the run: the log records it and every process it started is stopped."""
        self._task.cancel()


def stream_run(objective: str, options: RunOptions) -> RunStream:
    """Start ``run_task(objective, options)`` and stream its events; call inside an event loop."""
    return RunStream(objective, options)


def run_sync(objective: str, options: RunOptions) -> RunReport:
    """``run_task`` for code without an event loop: runs the objective to its end and returns its
    report (``ConfigError`` when called inside a running loop: ``await run_task(...)`` there)."""
    from protoagent.workflow.run import run_task

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(run_task(objective, options))
    raise ConfigError("run_sync was called inside a running event loop: use 'await run_task(objective, options)'")


def read_report(session_id: str, store: SessionStore) -> dict[str, Any]:
    """The evidence report of a recorded run, rebuilt from its log with the same fields as
    ``RunReport.to_json``: status, surface, applied, verified, criteria_supported, changed files,
    external effects, checks with phases and outcomes, notes and the summary (the latest run of
    a resumed session; a log recorded before evidence named its checks lists every check)."""
    from protoagent.workflow.run_report import RunReport

    return RunReport.from_events(session_id, store.load(session_id)).to_json()
