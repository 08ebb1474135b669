"""Turn API requests into runs: the same options as ``protoagent run``, inside allowed roots."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from protoagent.events.queries import session_head
from protoagent.events.store import SessionStore
from protoagent.events.types import Event
from protoagent.interfaces.web.hub import RunStarter
from protoagent.interfaces.web.requests import MessageBody, RunBody, WebConfig, confine_repo
from protoagent.tools.approvals import Answerer, Policy
from protoagent.workflow.run import RunOptions, run_task
from protoagent.workflow.run_options import run_options

RESUMABLE_POLICIES: dict[str, Policy] = {"ask": "ask", "auto-edit": "auto-edit", "auto": "auto", "deny": "deny"}
"""Policies a continuation keeps from the session; any other recorded policy asks."""


def run_starter(body: RunBody, config: WebConfig, store: SessionStore) -> RunStarter:
    """A starter for a new run; the repository is confined before anything is recorded."""
    repo = confine_repo(body.repo, config.roots)
    surface = None if body.surface == "auto" else body.surface

    async def start(answerer: Answerer, on_event: Callable[[Event], None]) -> Any:
        options = _options(repo, body.model, body.approval, config, store, answerer, on_event)
        options.surface = surface
        options.mode = body.mode
        return await run_task(body.objective, options)

    return start


def continue_starter(session_id: str, body: MessageBody, config: WebConfig, store: SessionStore) -> RunStarter:
    """A starter that continues a recorded session with a new message (same mode, workspace,
    lead and task record; the session's model unless the request names another)."""
    created = session_head(store.load(session_id))
    root = Path(created.root)
    if created.mode == "coding":
        root = confine_repo(str(root), config.roots)
    # A Work session's folder was made by ProtoAgent itself under its data home.
    model = body.model or created.model
    approval: Policy = body.approval or RESUMABLE_POLICIES.get(created.approval_policy, "ask")
    surface = None if body.surface == "auto" else body.surface

    async def start(answerer: Answerer, on_event: Callable[[Event], None]) -> Any:
        options = _options(root, model, approval, config, store, answerer, on_event)
        options.surface = surface
        options.resume = session_id
        return await run_task(body.text, options)

    return start


def _options(
    repo: Path,
    model: str,
    approval: Policy,
    config: WebConfig,
    store: SessionStore,
    answerer: Answerer,
    on_event: Callable[[Event], None],
) -> RunOptions:
    return replace(
        run_options(repo, model, store, config.data_home, config.options),
        approval=approval,
        answerer=answerer if approval == "ask" else None,
        on_event=on_event,
        artifacts_root=config.artifacts_root,
    )
