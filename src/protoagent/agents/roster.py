"""Discovering agents: built-in profiles, then user and project Markdown files. Pure reads.

Work agents are flat files (``agents/NAME.md``); Coding agents live in ``agents/coding/NAME.md``.
Nothing else under ``agents/`` is exposed. A file that does not validate is left out with a
diagnostic instead of breaking the runtime. A file whose ``model`` cannot name a model stays in
(with a diagnostic): a run that would use that agent refuses to start rather than quietly
answering with another model.

A repository's files are untrusted: their ``model`` and any ``tools`` beyond the code-owned
profile are ignored, each with a note, until the person trusts them (``agents.trust``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from protoagent.agents.definition import AgentDefinition, AgentSource, AppMode, model_problem, parse_agent
from protoagent.agents.profiles import PROFILES, profile_for
from protoagent.agents.trust import AgentTrust, restrict_untrusted
from protoagent.errors import ConfigError
from protoagent.workspace.confined import is_confined_dir, read_confined

PROJECT_AGENTS = Path(".protoagent") / "agents"
USER_AGENTS = "agents"


@dataclass(frozen=True, slots=True)
class AgentProblem:
    path: Path
    problem: str

    def __str__(self) -> str:
        return self.problem if self.problem.startswith(str(self.path)) else f"{self.path}: {self.problem}"


@dataclass(frozen=True, slots=True)
class AgentRoster:
    """The winning definition of every agent (project over user over built-in) and the problems."""

    definitions: tuple[AgentDefinition, ...]
    problems: tuple[AgentProblem, ...] = ()

    @property
    def notices(self) -> tuple[str, ...]:
        """One line per ignored field of a repository file (the files themselves are valid)."""
        return tuple(line for d in self.definitions for line in d.ignored)

    def in_mode(self, mode: AppMode | None) -> tuple[AgentDefinition, ...]:
        return tuple(d for d in self.definitions if mode is None or d.mode == mode)

    def find(self, name: str, mode: AppMode | None = None) -> AgentDefinition:
        """By id (``coding/NAME`` or a Work name) or by bare name within ``mode``."""
        if name.startswith("coding/"):
            mode, name = "coding", name.removeprefix("coding/")
        matches = [d for d in self.in_mode(mode) if d.name == name]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            known = ", ".join(d.agent_id for d in self.in_mode(mode))
            raise ConfigError(f"unknown agent {name!r}; known agents: {known}")
        raise ConfigError(f"agent name {name!r} exists in both modes; say 'coding/{name}' or pass --mode work")


def agent_roots(repo: Path | None, home: Path | None) -> list[tuple[Path, AgentSource]]:
    """The folders searched, lowest precedence first."""
    roots: list[tuple[Path, AgentSource]] = []
    if home is not None:
        roots.append((Path(home) / USER_AGENTS, "user"))
    if repo is not None:
        roots.append((Path(repo) / PROJECT_AGENTS, "project"))
    return roots


def _files(root: Path) -> Iterator[tuple[Path, AppMode]]:
    if not root.is_dir():
        return
    for path in sorted(root.glob("*.md")):
        yield path, "work"
    coding = root / "coding"
    if coding.is_dir():
        for path in sorted(coding.glob("*.md")):
            yield path, "coding"


def read_agent_file(path: Path, mode: AppMode, source: AgentSource) -> AgentDefinition:
    profile = profile_for(mode, path.stem)
    try:
        # Never through a link leading out of its folder, never blocking on a FIFO.
        text = read_confined(path.parent, path.name, limit=1 << 20).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the agent file ({exc})") from None
    return parse_agent(text, path, mode, source, profile.role if profile is not None else "member")


def load_catalog(repo: Path | None = None, home: Path | None = None) -> AgentRoster:
    """Every agent visible from ``repo`` for the user at ``home``; reads only, writes nothing."""
    winners: dict[tuple[AppMode, str], AgentDefinition] = {(p.mode, p.name): p for p in PROFILES}
    problems: list[AgentProblem] = []
    trust = AgentTrust(home)
    for root, source in agent_roots(repo, home):
        fence = Path(repo) if source == "project" and repo is not None else Path(home or root)
        if any(d.exists() and not is_confined_dir(fence, d) for d in (root, root / "coding")):
            problems.append(AgentProblem(root, f"{root}: a folder of agent files leads outside {fence}; not read"))
            continue
        for path, mode in _files(root):
            try:
                definition = read_agent_file(path, mode, source)
            except ConfigError as exc:
                problems.append(AgentProblem(path, str(exc)))
                continue
            profile = profile_for(mode, definition.name)
            if profile is not None and profile.role != definition.role:
                problems.append(AgentProblem(path, f"{path}: {definition.name} is a built-in {profile.role}"))
                continue
            if source == "project" and repo is not None:
                definition = restrict_untrusted(definition, winners.get((mode, definition.name)), Path(repo), trust)
            winners[(mode, definition.name)] = definition
    problems.extend(_dangling_members(winners))
    bad = {p.path for p in problems}
    kept = tuple(d for d in winners.values() if d.path not in bad)
    for definition in kept:
        problem = model_problem(definition.model) if definition.model else None
        if problem is not None and definition.path is not None:
            problems.append(AgentProblem(definition.path, f"{definition.path}: {problem}"))
    return AgentRoster(kept, tuple(problems))


def _dangling_members(winners: dict[tuple[AppMode, str], AgentDefinition]) -> list[AgentProblem]:
    out = []
    for definition in winners.values():
        if definition.lead is None or definition.path is None:
            continue
        lead = winners.get((definition.mode, definition.lead))
        if lead is None or lead.role != "lead":
            out.append(
                AgentProblem(
                    definition.path,
                    f"{definition.path}: lead {definition.lead!r} is not a {definition.mode} lead; "
                    "name an existing lead or remove the 'lead' field",
                )
            )
    return out
