"""The session list's rows (status, repository, model, times) and the choices a new run offers
(repositories under the roots, models), read from the logs and the roots alone.

A row is computed from the session's log once and kept until the log grows, so a page that
refreshes the list every few seconds reloads only the sessions that changed.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protoagent.events.catalog import RunEnded, SessionCreated, SessionResumed
from protoagent.events.queries import starts_run
from protoagent.events.store import SessionStore, SessionSummary
from protoagent.events.types import Event
from protoagent.models.installed import EMBEDDED_MODELS
from protoagent.models.registry import provider_names

MAX_REPOSITORIES = 200
"""Repositories a new-run form lists at most (the repository field still takes any path)."""
REPOSITORY_DEPTH = 2
"""How deep under a root a repository (a folder with ``.git``) is looked for."""


@dataclass(frozen=True, slots=True)
class _Facts:
    events: int
    repo: str
    mode: str
    model: str
    status: str
    """The last run's ``run.ended`` status, or ``unfinished`` when a run never recorded its end."""
    runs: int
    updated: float


class SessionRows:
    """Rows of ``GET /api/sessions``, cached per session until its event count changes."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self._facts: dict[str, _Facts] = {}

    def row(self, summary: SessionSummary, *, running: bool, pending: int) -> dict[str, Any]:
        facts = self._facts.get(summary.session_id)
        if facts is None or facts.events != summary.event_count:
            facts = self._read(summary)
            self._facts[summary.session_id] = facts
        return {
            "session_id": summary.session_id,
            "created": summary.created,
            "updated": facts.updated,
            "events": summary.event_count,
            "title": summary.title,
            "repo": facts.repo,
            "mode": facts.mode,
            "model": facts.model,
            "runs": facts.runs,
            "status": "running" if running else facts.status,
            "running": running,
            "pending": pending,
        }

    def models(self) -> list[str]:
        """Models of the listed sessions, the most recently used first."""
        ordered = sorted(self._facts.values(), key=lambda f: f.updated, reverse=True)
        return list(dict.fromkeys(f.model for f in ordered if f.model))

    def _read(self, summary: SessionSummary) -> _Facts:
        events = self.store.load(summary.session_id)
        return _facts(events, summary)


def _facts(events: list[Event], summary: SessionSummary) -> _Facts:
    created = events[0].fact(SessionCreated) if events else None
    model, status, runs = created.model if created is not None else "", "unfinished", 0
    for event in events:
        if starts_run(event):
            runs += 1
            started = event.fact(SessionCreated) or event.fact(SessionResumed)
            model = (started.model if started is not None else None) or model
            status = "unfinished"
        elif (ended := event.fact(RunEnded)) is not None:
            status = ended.status
    return _Facts(
        summary.event_count,
        created.root if created is not None else "",
        (created.mode if created is not None else None) or "coding",
        model,
        status,
        runs,
        events[-1].time if events else summary.created,
    )


def model_choices(used: list[str]) -> list[str]:
    """``local``, each embedded model, the models sessions used, then each provider's prefix."""
    embedded = [f"local:{m.alias}" for m in EMBEDDED_MODELS]
    prefixes = [f"{name}:" for name in provider_names() if name != "local"]
    return list(dict.fromkeys(["local", *embedded, *used, *prefixes]))


def repository_choices(roots: tuple[Path, ...]) -> list[dict[str, str]]:
    """Each root and the git repositories under it (``REPOSITORY_DEPTH`` deep, hidden folders
    skipped), as the ``repo`` value a run takes (relative to the first root) and its full path."""
    found: list[Path] = []
    for root in roots:
        found.append(root)
        found.extend(_repositories(root, REPOSITORY_DEPTH))
    choices = []
    for path in dict.fromkeys(found):
        value = str(path.relative_to(roots[0])) if path.is_relative_to(roots[0]) else str(path)
        choices.append({"value": value, "path": str(path)})
        if len(choices) >= MAX_REPOSITORIES:
            break
    return choices


def _repositories(folder: Path, depth: int) -> list[Path]:
    if depth <= 0:
        return []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    found: list[Path] = []
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        if (path / ".git").exists():
            found.append(path)
        found.extend(_repositories(path, depth - 1))
        if len(found) >= MAX_REPOSITORIES:
            break
    return found
