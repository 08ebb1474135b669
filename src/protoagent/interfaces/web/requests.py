"""The JSON bodies the web API accepts, and the confinement of paths and ids in requests."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from protoagent.errors import ConfigError

SESSION_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")


class RunBody(BaseModel):
    """``POST /api/runs``: the same choices as ``protoagent run``."""

    model_config = ConfigDict(extra="forbid")
    objective: str = Field(min_length=1)
    repo: str = "."
    """A folder inside one of the server's allowed roots (relative paths start at the first root)."""
    model: str = "local"
    approval: Literal["ask", "auto-edit", "auto", "deny"] = "ask"
    surface: Literal["auto", "conversation", "question", "verification", "editing"] = "auto"
    mode: Literal["work", "coding"] | None = None


class MessageBody(BaseModel):
    """``POST /api/sessions/{id}/messages``: continue a recorded session."""

    model_config = ConfigDict(extra="forbid")
    text: str = Field(min_length=1)
    model: str | None = None
    """Model for the continuation; the session's own model when unset."""
    approval: Literal["ask", "auto-edit", "auto", "deny"] | None = None
    """Approval policy for the continuation; the session's own policy when unset."""
    surface: Literal["auto", "conversation", "question", "verification", "editing"] = "auto"


class CompactBody(BaseModel):
    """``POST /api/sessions/{id}/compact``: summarize the conversation so far (``/compact``)."""

    model_config = ConfigDict(extra="forbid")
    focus: str = Field("", max_length=500)
    """What the summary should keep in view; the session's own model writes it."""


class ApprovalBody(BaseModel):
    """``POST /api/approvals/{call_id}``: one of the three approval choices."""

    model_config = ConfigDict(extra="forbid")
    decision: Literal["allow", "deny"]
    scope: Literal["once", "session"] = "once"
    """``session`` allows the same tool on the same paths (or the same command) for the session."""
    reason: str = ""
    """For a denial: the reason the model sees."""
    session_id: str | None = None
    """Needed only when the same call id is pending in several sessions."""


@dataclass(frozen=True, slots=True)
class WebConfig:
    """How the server was started."""

    roots: tuple[Path, ...]
    """Folders a run's ``repo`` must lie in (``--root``, repeatable; default the current folder)."""
    token: str = ""
    """Every request needs it (``Authorization: Bearer``, or the cookie ``/?token=`` sets); empty refuses all."""
    host: str = "127.0.0.1"
    data_home: Path | None = None
    artifacts_root: Path | None = None
    options: dict[str, bool] = field(default_factory=dict)
    """Optional agents (tester, scout, mcp) as the person configured them."""


def check_session_id(session_id: str) -> str:
    if not SESSION_ID.fullmatch(session_id):
        raise ConfigError(f"{session_id!r} is not a session id; take one from GET /api/sessions")
    return session_id


def confine_repo(repo: str, roots: tuple[Path, ...]) -> Path:
    """The repository folder for a request, refused unless it resolves inside an allowed root."""
    if "\0" in repo:
        raise ConfigError("repo contains a NUL byte; give a folder path")
    path = Path(repo).expanduser()
    if not path.is_absolute():
        path = roots[0] / path
    resolved = path.resolve()
    if not any(resolved == root or resolved.is_relative_to(root) for root in roots):
        allowed = ", ".join(str(r) for r in roots)
        raise ConfigError(
            f"repo {repo!r} is outside the allowed roots ({allowed}); restart 'protoagent serve' with --root DIR"
        )
    if not resolved.is_dir():
        raise ConfigError(f"repo {repo!r} is not a directory; give an existing folder inside {roots[0]}")
    return resolved
