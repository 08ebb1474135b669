"""ProtoAgent: a coding-agent harness that turns an objective into governed model work and evidence.

The public API (the Python SDK). Names load lazily so that importing ``protoagent`` (and the
CLI's start-up) stays fast. Run an objective (here on the scripted model; use ``model="local"``
or a hosted model, and ``open_store()`` to keep the session with the others):

>>> import asyncio, tempfile
>>> from pathlib import Path
>>> from protoagent import MemoryStore, RunOptions, run_task
>>> from protoagent.testing import final_turn, make_repo, write_script
>>> folder = Path(tempfile.mkdtemp())
>>> repo = make_repo(folder / "repo", {"dates.py": "def parse_date(text): ...\\n"}, git=False)
>>> script = write_script(folder / "turns.jsonl", [final_turn("parse_date is in dates.py.")])
>>> options = RunOptions(repo=repo, model=f"scripted:{script}", store=MemoryStore(), surface="question")
>>> report = asyncio.run(run_task("where is parse_date defined?", options))
>>> report.status, report.summary
('completed', 'parse_date is in dates.py.')

``protoagent.api`` is the SDK's one module: it streams a run's events, answers approvals with a
callback and reads sessions and reports.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "run_task": "protoagent.workflow.run",
    "RunOptions": "protoagent.workflow.run",
    "RunReport": "protoagent.workflow.run",
    "stream_run": "protoagent.api",
    "run_sync": "protoagent.api",
    "RunStream": "protoagent.api",
    "approval_callback": "protoagent.api",
    "read_report": "protoagent.api",
    "compact_session": "protoagent.api",
    "CompactResult": "protoagent.api",
    "rewind_session": "protoagent.api",
    "RewindPlan": "protoagent.api",
    "RewindRefused": "protoagent.api",
    "fork_session": "protoagent.api",
    "session_changes": "protoagent.api",
    "unified_diff": "protoagent.api",
    "open_store": "protoagent.api",
    "load_session": "protoagent.api",
    "data_home": "protoagent.api",
    "Event": "protoagent.events",
    "SessionLog": "protoagent.events",
    "SQLiteStore": "protoagent.events",
    "MemoryStore": "protoagent.events",
    "derive_messages": "protoagent.events",
    "ModelRequest": "protoagent.models.types",
    "ModelProvider": "protoagent.models.protocol",
    "resolve_model": "protoagent.models.registry",
    "ApprovalAnswer": "protoagent.tools.approvals",
    "ApprovalRequest": "protoagent.tools.approvals",
    "SessionRule": "protoagent.tools.approvals",
    "Tool": "protoagent.tools.base",
    "ProtoAgentError": "protoagent.errors",
    "ConfigError": "protoagent.errors",
    "ToolRejected": "protoagent.errors",
    "RunError": "protoagent.errors",
    "ProviderError": "protoagent.errors",
    "LimitExceeded": "protoagent.errors",
    "SessionLoadError": "protoagent.errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'protoagent' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
