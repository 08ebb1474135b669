"""One batch task, start to end, in whichever worker process runs it (pool or Ray).

``run_one`` takes and returns plain data so both engines can ship it between processes. The
task runs the same ``run_task`` as ``protoagent run``, in its own copy of the repository, with
its session in the shared store; the result row is read off the report and the session log. A
SWE-bench task's row also carries the session's patch and, when evaluating, its score.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from protoagent.batch.isolation import prepare_workspace
from protoagent.batch.patches import snapshot_config
from protoagent.batch.swebench import instance_outcome
from protoagent.batch.tasks import BatchTask, Expectation
from protoagent.errors import ProtoAgentError
from protoagent.events.catalog import ModelRequested
from protoagent.events.queries import facts
from protoagent.events.usage import token_totals


@dataclass(frozen=True, slots=True)
class WorkerSetup:
    """What every worker needs besides the task: where sessions go and where copies live."""

    store: str
    """A ``postgresql://`` URL or a SQLite file path."""
    data_home: str
    work_root: str | None = None
    """Parent folder of the per-task copies (default: the system's temporary folder)."""
    evaluate: bool = False
    """Score each SWE-bench task's patch against its tests (``--evaluate``)."""
    python: str | None = None
    """The interpreter those tests run under; None: the local clone's own environment."""


def run_one(task_data: dict[str, Any], setup: WorkerSetup) -> dict[str, Any]:
    """Run one task and return its result row. Never raises for a task's own failure."""
    task = BatchTask.model_validate(task_data)
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix=f"protoagent-batch-{_safe(task.id)}-", dir=setup.work_root))
    try:
        workspace = prepare_workspace(task, scratch / "repo")
        config = snapshot_config(workspace) if task.swe_bench is not None else b""
        try:
            row = asyncio.run(_run(task, workspace, setup))
        except ProtoAgentError as exc:
            row = {"status": "error", "error": str(exc)}
        if task.swe_bench is not None:
            row.update(_score(task, workspace, config, scratch, setup))
    except ProtoAgentError as exc:
        row = {"status": "error", "error": str(exc)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    row = {"id": task.id, **row, "wall_s": round(time.monotonic() - started, 3)}
    if task.swe_bench is not None:
        row.setdefault("instance_id", task.swe_bench.instance_id)
    row["expect_held"] = expectation_held(task.expect, row)
    return row


def _score(task: BatchTask, workspace: Path, config: bytes, scratch: Path, setup: WorkerSetup) -> dict[str, Any]:
    """A SWE-bench task's patch and score; a failure to take the patch keeps the run's fields."""
    try:
        return instance_outcome(task, workspace, config, scratch, setup.evaluate, setup.python, Path(setup.data_home))
    except ProtoAgentError as exc:
        return {"status": "error", "error": f"the patch could not be taken: {exc}"}


async def _run(task: BatchTask, workspace: Path, setup: WorkerSetup) -> dict[str, Any]:
    from protoagent.events.stores import open_store_at
    from protoagent.workflow.run import run_task
    from protoagent.workflow.run_options import run_options

    home = Path(setup.data_home)
    with open_store_at(setup.store) as store:
        # A suite's runs take the optional agents' defaults, whatever the user's settings say.
        options = replace(
            run_options(workspace, task.model, store, home, agents={}),
            approval=task.approval,
            answerer=None,
            surface=task.surface,
            mode=task.mode,
            max_model_calls=task.max_model_calls,
        )
        report = await run_task(task.objective, options)
        events = store.load(report.session_id)
    calls = sum(1 for _ in facts(events, ModelRequested))
    data = report.to_json()
    return {
        "session_id": report.session_id,
        "status": report.status,
        "applied": data["applied"],
        "verified": data["verified"],
        "criteria_supported": data["criteria_supported"],
        "checks": data["checks"],
        "model_calls": calls,
        "tokens": dict(token_totals(events)),
    }


def expectation_held(expect: Expectation | None, row: dict[str, Any]) -> bool | None:
    """Whether the task's ``expect`` held for its result row; None when it names nothing."""
    if expect is None:
        return None
    for field in ("status", "applied", "verified", "criteria_supported"):
        wanted = getattr(expect, field)
        if wanted is not None and row.get(field) != wanted:
            return False
    if expect.check is not None:
        last = [c for c in row.get("checks", []) if c.get("id") == expect.check]
        if not last or last[-1].get("outcome") != "passed":
            return False
    return True


def _safe(name: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name)[:40]
