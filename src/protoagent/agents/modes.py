"""Application modes and the persisted facts of a session: its mode, workspace and lead.

After a session exists its persisted mode and workspace are authoritative; a resume that asks
for another one is refused before anything is written.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from protoagent.agents.definition import APP_MODES, AppMode
from protoagent.agents.profiles import DEFAULT_LEADS
from protoagent.errors import ConfigError
from protoagent.events.catalog import SessionCreated
from protoagent.events.types import Event
from protoagent.json_form import json_form, json_value

WORKSPACES = "workspaces"
"""Folder under the data home holding Work sessions' workspaces."""


@dataclass(frozen=True, slots=True)
class SessionFacts:
    """What ``session.created`` recorded about a top-level session."""

    session_id: str
    mode: AppMode
    lead: str
    root: Path
    """The workspace, or the primary repository of a multi-repository session."""
    extra_roots: tuple[Path, ...] = ()
    """The further repositories of a multi-repository session, in order."""

    @property
    def roots(self) -> tuple[Path, ...]:
        return (self.root, *self.extra_roots)

    def to_json(self) -> dict[str, str | list[str]]:
        return {**json_form(self, omit=("extra_roots",)), "roots": json_value(self.roots)}


def session_facts(session_id: str, events: Sequence[Event]) -> SessionFacts:
    """The persisted mode, lead and workspace (sessions recorded before modes are Coding)."""
    created = events[0].fact(SessionCreated) if events else None
    raw_mode = (created.mode if created is not None else None) or "coding"
    mode: AppMode = raw_mode if raw_mode in APP_MODES else "coding"
    lead = (created.lead if created is not None else None) or DEFAULT_LEADS[mode]
    root = Path(created.root if created is not None else ".")
    extra = tuple(Path(r) for r in created.roots[1:]) if created is not None else ()
    return SessionFacts(session_id, mode, lead, root, extra)


def check_resume(
    facts: SessionFacts,
    mode: AppMode | None,
    repo: Path | None,
    agent: str | None,
    *,
    extra: Sequence[Path] | None = None,
) -> None:
    """Refuse a resume that would migrate the session (mode, workspace, repositories or lead).

    ``repo`` is the primary repository asked for (``None``: not asked); ``extra`` the further
    repositories asked for (``None``: not asked, ``()``: none).
    """
    sid = facts.session_id
    if mode is not None and mode != facts.mode:
        raise ConfigError(f"session {sid} is a {facts.mode} session and cannot change mode; drop --mode {mode}")
    if repo is not None and _resolved(repo) != facts.root.resolve():
        raise ConfigError(
            f"session {sid} works in {facts.root} and cannot move to {repo}; drop --repo or pass that folder"
        )
    if extra is not None and {_resolved(r) for r in extra} != {r.resolve() for r in facts.extra_roots}:
        recorded = ", ".join(str(r) for r in facts.roots)
        raise ConfigError(
            f"session {sid} works in {recorded} and cannot change its repositories; drop --repo or pass exactly those"
        )
    if agent is not None and agent.removeprefix("coding/") != facts.lead:
        raise ConfigError(f"session {sid} is led by {facts.lead!r}; drop --agent {agent} to continue it")


def _resolved(path: Path) -> Path:
    return Path(path).expanduser().resolve()


def default_mode(repo_given: bool, cwd: Path) -> AppMode:
    """Coding when a repository is named or the folder is in one (git or ``.protoagent``); else Work."""
    if repo_given:
        return "coding"
    here = cwd.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists() or (folder / ".protoagent").is_dir():
            return "coding"
    return "work"


def new_workspace(home: Path | None) -> Path:
    """Create a fresh Work session workspace under the data home (application bootstrap only)."""
    if home is None:
        raise ConfigError("Work mode needs a data home for its session workspace; set PROTOAGENT_HOME")
    folder = Path(home) / WORKSPACES / ("w_" + uuid.uuid4().hex[:12])
    folder.mkdir(parents=True, exist_ok=False)
    return folder.resolve()
