"""Writing and removing agent files: the one write path the settings API (and any other surface) uses.

An agent file is written only where its namespace puts it (``agents/NAME.md`` for Work,
``agents/coding/NAME.md`` for Coding) under the user's data home or a repository's
``.protoagent``; the text is validated with that namespace's explicit mode before anything is
written, and the write is an atomic replace that never follows a link out of its folder. A Form
edit rewrites only the lines of fields whose value changed (``AgentFile.dump``), so unknown fields,
comments and layout survive byte-for-byte. Writing a repository's file changes no trust: a
repository agent's ``model`` and extra ``tools`` stay ignored until the person trusts them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from protoagent.agents.definition import (
    APP_MODES,
    NAME_PATTERN,
    AgentDefinition,
    AppMode,
    parse_agent,
    split_agent_text,
)
from protoagent.agents.profiles import profile_for
from protoagent.agents.roster import PROJECT_AGENTS, USER_AGENTS
from protoagent.atomic_files import replace_file
from protoagent.errors import ConfigError
from protoagent.workspace.confined import is_confined_dir, read_confined

Scope = Literal["user", "project"]
MAX_AGENT_BYTES = 1 << 20
FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True, slots=True)
class AgentLocation:
    """Where one agent's file lives at one scope, and the folder it must stay inside."""

    mode: AppMode
    name: str
    scope: Scope
    path: Path
    fence: Path


def agent_location(mode: str, name: str, scope: str, repo: Path | None, home: Path | None) -> AgentLocation:
    """The file of agent ``name`` in namespace ``mode`` at ``scope``; refuses names that are not agent names."""
    if mode not in APP_MODES:
        raise ConfigError(f"namespace {mode!r} is not one of: work, coding")
    if not NAME_PATTERN.match(name):
        raise ConfigError(f"agent name {name!r} must be lower-case letters, digits, '-' or '_' (max 40)")
    if scope == "user":
        if home is None:
            raise ConfigError("no data home to write user agents to; set PROTOAGENT_HOME")
        fence = Path(home)
        root = fence / USER_AGENTS
    elif scope == "project":
        if repo is None:
            raise ConfigError("scope 'project' needs a repository; pass repo")
        fence = Path(repo)
        root = fence / PROJECT_AGENTS
    else:
        raise ConfigError(f"scope {scope!r} is not one of: user, project")
    folder = root / "coding" if mode == "coding" else root
    return AgentLocation(mode, name, scope, folder / f"{name}.md", fence)  # type: ignore[arg-type]


def read_text(location: AgentLocation) -> str | None:
    """The file's text, or ``None`` when there is none at this scope."""
    if not location.path.exists() and not location.path.is_symlink():
        return None
    if not is_confined_dir(location.fence, location.path.parent):
        raise ConfigError(f"{location.path.parent}: a folder of agent files leads outside {location.fence}")
    try:
        return read_confined(location.path.parent, location.path.name, limit=MAX_AGENT_BYTES).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{location.path}: cannot read the agent file ({exc})") from None


def check_text(location: AgentLocation, text: str) -> AgentDefinition:
    """Validate ``text`` as this location's file (its namespace's mode, a built-in's role); pure."""
    if len(text.encode("utf-8")) > MAX_AGENT_BYTES:
        raise ConfigError(f"{location.path}: an agent file is at most {MAX_AGENT_BYTES} bytes")
    profile = profile_for(location.mode, location.name)
    definition = parse_agent(
        text, location.path, location.mode, location.scope, profile.role if profile is not None else "member"
    )
    if profile is not None and profile.role != definition.role:
        raise ConfigError(f"{location.path}: {definition.name} is a built-in {profile.role}; keep its role")
    return definition


def form_text(location: AgentLocation, form: Mapping[str, Any], current: str | None) -> str:
    """The file text after a Form edit: only fields whose value differs from the file's are rewritten.

    ``prompt`` (when given) replaces the body; other keys are frontmatter fields, unknown ones
    included (sent back unchanged, their lines stay as they were). A field left out is kept.
    Without a file yet, the new one holds the name and the fields given, nothing copied from the
    code-owned profile."""
    bad = [k for k in form if not isinstance(k, str) or not FIELD_NAME.fullmatch(k)]
    if bad:
        raise ConfigError(f"form field {bad[0]!r} is not a field name; use letters, digits, '-' or '_'")
    agent = split_agent_text(current if current is not None else f"---\nname: {location.name}\n---\n", "form")
    changes = {k: _plain(v) for k, v in form.items() if k != "prompt" and _plain(agent.frontmatter.get(k)) != _plain(v)}
    if "prompt" in form:
        prompt = form["prompt"]
        if not isinstance(prompt, str):
            raise ConfigError("form field 'prompt' must be text")
        if prompt.strip() != agent.body.strip():
            agent.body = prompt if prompt.endswith("\n") or not prompt else prompt + "\n"
    return agent.dump(changes)


def _plain(value: Any) -> Any:
    """YAML round-trip values as plain JSON values, for comparing a Form with the file."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def write_agent(location: AgentLocation, text: str) -> AgentDefinition:
    """Validate ``text``, then replace the file atomically, never through a link."""
    definition = check_text(location, text)
    folder = location.path.parent
    _make_folders(location.fence, folder)
    if location.path.is_symlink():
        raise ConfigError(f"{location.path} is a symbolic link; replace it by a plain file by hand first")
    replace_file(location.path, text, prefix=f".{location.name}.", suffix=".md")
    return definition


def delete_agent(location: AgentLocation) -> None:
    """Remove the file at this scope; a built-in agent has none and is refused by the caller."""
    if not location.path.exists() and not location.path.is_symlink():
        raise ConfigError(f"no {location.scope} file for agent {location.name!r} at {location.path}")
    if not is_confined_dir(location.fence, location.path.parent):
        raise ConfigError(
            f"{location.path.parent}: a folder of agent files leads outside {location.fence}; not changed"
        )
    location.path.unlink()


def _make_folders(fence: Path, folder: Path) -> None:
    """Create ``folder`` beneath ``fence``, refusing any existing step that leads outside it."""
    fence.mkdir(parents=True, exist_ok=True)
    step = fence
    for part in folder.relative_to(fence).parts:
        step = step / part
        if step.is_symlink() or (step.exists() and not is_confined_dir(fence, step)):
            if not is_confined_dir(fence, step):
                raise ConfigError(f"{step} leads outside {fence}; agent files are not written through it")
        if not step.exists():
            step.mkdir()
        elif not step.is_dir():
            raise ConfigError(f"{step} is not a folder; move it away to write agent files")
