"""ProtoAgent: a coding-agent harness that turns an objective into governed model work and evidence.

The public API (the Python SDK). Names load lazily so that importing ``protoagent`` (and the
CLI's start-up) stays fast:

    import asyncio
    from pathlib import Path
    from protoagent import RunOptions, open_store, run_task

    with open_store() as store:
        report = asyncio.run(run_task("fix the failing test", RunOptions(repo=Path("."), model="local", store=store)))
    print(report.to_json())
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "run_task": "protoagent.workflow.run",
    "RunOptions": "protoagent.workflow.run",
    "RunReport": "protoagent.workflow.run",
    "run_agent": "protoagent.api",
    "RunResult": "protoagent.api",
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
