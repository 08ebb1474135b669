"""Agent Markdown files: YAML frontmatter plus a prompt body, parsed without side effects.

The frontmatter is kept as a round-trip YAML mapping, so fields ProtoAgent does not know
(and their comments) survive a load → edit → save cycle byte-for-byte where unchanged.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast, get_args

from protoagent.errors import ConfigError
from protoagent.frontmatter import opens_frontmatter, split_frontmatter

if TYPE_CHECKING:
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

AppMode = Literal["work", "coding"]
"""The application mode: Work (a session workspace) or Coding (a persisted repository)."""
APP_MODES: tuple[AppMode, ...] = get_args(AppMode)
AgentRole = Literal["lead", "member"]
AgentSource = Literal["builtin", "user", "project"]
NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
LIST_FIELDS = ("tools", "tools_opt_out", "skills", "mcp_servers")
_FENCE = "---"


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One agent as a file (or a code-owned profile) declares it; not yet merged."""

    name: str
    mode: AppMode
    role: AgentRole = "member"
    description: str = ""
    lead: str | None = None
    """For members: the lead they serve; ``None`` binds them to the mode's default lead."""
    model: str | None = None
    tools: tuple[str, ...] = ()
    tools_opt_out: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    mcp_servers: tuple[str, ...] = ()
    prompt: str = ""
    source: AgentSource = "builtin"
    path: Path | None = None
    model_file: Path | None = None
    """The file the ``model`` comes from when it is not ``path`` (an ignored repository model
    falls back to the person's own file); relative paths in the spec are read beside it."""
    ignored: tuple[str, ...] = ()
    """One line per field of a repository file that does not count until the person trusts it."""

    @property
    def agent_id(self) -> str:
        """Work agents are flat names; Coding agents are ``coding/<name>``."""
        return self.name if self.mode == "work" else f"coding/{self.name}"


@dataclass(slots=True)
class AgentFile:
    """The raw text of an agent file, split into a round-trip frontmatter map and the body."""

    frontmatter: CommentedMap
    body: str
    header: str
    """The frontmatter text exactly as read, so an unchanged map is written back unchanged."""

    def dump(self, changes: Mapping[str, Any] | None = None) -> str:
        """The file text with ``changes`` applied. Only the changed fields' lines are rewritten;
        every other line (unknown fields, comments, layout) stays byte-for-byte."""
        header = self.header
        for key, value in (changes or {}).items():
            header = _replace_field(header, self.frontmatter, key, value)
            self.frontmatter = cast("CommentedMap", _yaml().load(header))
        return f"{_FENCE}\n{header}{_FENCE}\n{self.body}"


def _replace_field(header: str, data: CommentedMap, key: str, value: Any) -> str:
    from ruamel.yaml.comments import CommentedMap

    entry = CommentedMap()
    entry[key] = value
    dumped = _dump_yaml(entry)
    lines = header.splitlines(keepends=True)
    if key not in data:
        tail = "" if not lines or lines[-1].endswith("\n") else "\n"
        return header + tail + dumped
    starts = sorted(data.lc.key(k)[0] for k in data)
    start = data.lc.key(key)[0]
    later = [line for line in starts if line > start]
    end = later[0] if later else len(lines)
    kept = [line for line in lines[start + 1 : end] if not line.strip() or line.lstrip().startswith("#")]
    trailing = kept if all(not line.startswith((" ", "-")) for line in kept) else []
    return "".join([*lines[:start], dumped, *trailing, *lines[end:]])


def _yaml() -> YAML:
    # Imported on first use: runs without agent files never pay for the YAML library.
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096
    return yaml


def _dump_yaml(data: CommentedMap) -> str:
    buffer = io.StringIO()
    _yaml().dump(data, buffer)
    return buffer.getvalue()


def split_agent_text(text: str, where: str) -> AgentFile:
    """Split ``---`` frontmatter from the body; ``ConfigError`` names what is wrong."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    split = split_frontmatter(text)
    if split is None and not opens_frontmatter(text):
        raise ConfigError(f"{where}: an agent file starts with a '---' line, then YAML frontmatter, then '---'")
    if split is None:
        raise ConfigError(f"{where}: the frontmatter is not closed by a '---' line")
    header, body = split.header, split.body
    try:
        data = _yaml().load(header) if header.strip() else CommentedMap()
    except YAMLError as exc:
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(f"{where}: the frontmatter is not valid YAML ({problem})") from None
    except RecursionError:
        raise ConfigError(f"{where}: the frontmatter is nested too deeply; keep it to a few levels") from None
    if not isinstance(data, CommentedMap):
        raise ConfigError(f"{where}: the frontmatter must be a YAML mapping of fields")
    return AgentFile(data, body, header)


def _text_field(data: Mapping[str, Any], key: str, where: str) -> str | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: field {key!r} must be a non-empty string")
    return value.strip()


def _list_field(data: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ConfigError(f"{where}: field {key!r} must be a list of names")
    return tuple(dict.fromkeys(str(v).strip() for v in value))


def model_problem(spec: str) -> str | None:
    """Why ``spec`` cannot name a model (the ``--model`` syntax), or ``None``. Pure: loads nothing."""
    from protoagent.models.registry import provider_names, split_spec

    name, rest = split_spec(spec)
    known = provider_names()
    if name not in known:
        return f"model {spec!r} names no known provider; use one of: {', '.join(known)} (e.g. 'openai:gpt-4.1')"
    if name != "local" and not rest.strip():
        return f"model {spec!r} names no model after {name + ':'!r}; write it as '{name}:NAME'"
    return None


def parse_agent(
    text: str, path: Path, mode: AppMode, source: AgentSource, default_role: AgentRole = "member"
) -> AgentDefinition:
    """Parse one agent file whose namespace gives ``mode``. Pure: nothing is written."""
    where = str(path)
    raw = split_agent_text(text, where)
    data = raw.frontmatter
    name = _text_field(data, "name", where) or path.stem
    if name != path.stem:
        raise ConfigError(f"{where}: name {name!r} differs from the file name; rename one so they match")
    if not NAME_PATTERN.match(name):
        raise ConfigError(f"{where}: name {name!r} must be lower-case letters, digits, '-' or '_' (max 40)")
    declared = _text_field(data, "mode", where)
    if declared is not None and declared != mode:
        home = "agents/coding/NAME.md" if declared == "coding" else "agents/NAME.md"
        raise ConfigError(f"{where}: mode {declared!r} does not match its folder ({mode}); move it to {home}")
    role = _text_field(data, "role", where) or default_role
    if role not in get_args(AgentRole):
        raise ConfigError(f"{where}: role {role!r} is not one of: lead, member")
    lead = _text_field(data, "lead", where)
    if lead is not None and role == "lead":
        raise ConfigError(f"{where}: a lead does not name a lead; remove the 'lead' field or use role: member")
    return AgentDefinition(
        name=name,
        mode=mode,
        role=cast(AgentRole, role),
        description=_text_field(data, "description", where) or "",
        lead=lead,
        model=_text_field(data, "model", where),
        tools=_list_field(data, "tools", where),
        tools_opt_out=_list_field(data, "tools_opt_out", where),
        skills=_list_field(data, "skills", where),
        mcp_servers=_list_field(data, "mcp_servers", where),
        prompt=raw.body.strip(),
        source=source,
        path=path,
    )
