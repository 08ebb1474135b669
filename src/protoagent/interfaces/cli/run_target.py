"""Where a ``run`` works: a new session's mode and folder, or a resumed session's own."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from protoagent.api import check_resume, default_mode, session_facts
from protoagent.errors import ConfigError, SessionLoadError
from protoagent.events.store import SessionStore

Mode = Literal["work", "coding"]


def resolve_target(
    store: SessionStore, repos: Sequence[Path], mode: Mode | None, agent: str | None, resume: str | None
) -> tuple[Path, tuple[Path, ...], Mode | None]:
    """The repository (or workspace), the further repositories and the mode to pass to the run.

    A new session takes ``--mode``, else Coding when ``--repo`` is given or the current folder is
    in a repository, else Work. Repeated ``--repo`` opens one Coding session over several
    repositories, the first being the primary. A resumed session keeps its persisted mode and
    folders; asking for others is a ``ConfigError`` raised before anything is written.
    """
    repo, extra = (repos[0], tuple(repos[1:])) if repos else (None, ())
    if resume is None:
        if mode == "work" and repo is not None:
            raise ConfigError("Work mode uses its own session workspace; drop --repo or use --mode coding")
        return (repo or Path(".")), extra, (mode or default_mode(repo is not None, Path.cwd()))
    try:
        facts = session_facts(resume, store.load(resume))
    except SessionLoadError as exc:
        raise ConfigError(f"cannot resume: {exc}") from None
    check_resume(facts, mode, repo, agent, extra=extra if repos else None)
    return facts.root, facts.extra_roots, None
