"""``protoagent agents``: list, show, validate, enable, disable and trust agents (read routes are pure)."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from protoagent.interfaces.cli.usage import EXIT_USAGE, fail

SWITCHES = {"on": "enable", "off": "disable"}


class ModeChoice(StrEnum):
    work = "work"
    coding = "coding"


class AgentsGroup(TyperGroup):
    """Keeps the older ``agents NAME on|off`` form working as ``agents enable|disable NAME``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # typer vendors its own click Context
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            if len(args) >= 2 and args[1] in SWITCHES:
                args = [SWITCHES[args[1]], args[0], *args[2:]]
            elif len(args) == 1:
                fail(f"say on or off, e.g. 'protoagent agents {args[0]} off'", False)
        return super().parse_args(ctx, args)


agents_app = typer.Typer(
    cls=AgentsGroup,
    help="List, show and validate agents (Markdown files), and turn them on or off.",
    rich_markup_mode=None,
    invoke_without_command=True,
)

ModeOption = Annotated[ModeChoice | None, typer.Option("--mode", help="Only this mode: work or coding.")]
RepoOption = Annotated[Path | None, typer.Option("--repo", help="Repository whose .protoagent/agents to read.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _repo(repo: Path | None) -> Path:
    return (repo or Path(".")).expanduser().resolve()


@agents_app.callback()
def agents(ctx: typer.Context) -> None:
    """With no command: show whether the optional agents (tester, scout, mcp) are on."""
    if ctx.invoked_subcommand is not None:
        return
    from protoagent.api import data_home
    from protoagent.settings import OPTIONAL_AGENTS, agent_enabled

    for name in OPTIONAL_AGENTS:
        typer.echo(f"{name}: {'on' if agent_enabled(data_home(), name) else 'off'}")


@agents_app.command("list")
def agents_list(mode: ModeOption = None, repo: RepoOption = None, as_json: JsonOption = False) -> None:
    """List agents: built-in, user ($PROTOAGENT_HOME/agents) and project (.protoagent/agents),
    and the diagnostics of files left out or with ignored fields."""
    from protoagent.api import agent_listing, data_home
    from protoagent.errors import ConfigError

    try:
        listing = agent_listing(mode.value if mode else None, _repo(repo), data_home())
    except ConfigError as exc:
        fail(str(exc), as_json)
    if as_json:
        typer.echo(json.dumps(listing))
        return
    for row in listing["agents"]:
        lead = f" (lead: {row['lead']})" if row["lead"] else ""
        state = "" if row["enabled"] else " [off]"
        typer.echo(f"{row['id']:<22} {row['role']:<6} {row['source']:<7} {row['description']}{lead}{state}")
    for diagnostic in listing["diagnostics"]:
        typer.echo(f"{diagnostic['severity']}: {diagnostic['problem']}", err=True)


class SurfaceChoice(StrEnum):
    conversation = "conversation"
    question = "question"
    verification = "verification"
    editing = "editing"


class ProfileChoice(StrEnum):
    small = "small"
    standard = "standard"


@agents_app.command("show")
def agents_show(
    name: Annotated[str, typer.Argument(help="Agent name or id (coding/NAME).")],
    mode: ModeOption = None,
    repo: RepoOption = None,
    surface: Annotated[
        SurfaceChoice | None,
        typer.Option(help="Show the tools and prompt a Coding lead runs on this surface (as `run --surface`)."),
    ] = None,
    profile: Annotated[
        ProfileChoice, typer.Option(help="With --surface: the model profile the run detects.")
    ] = ProfileChoice.standard,
    as_json: JsonOption = False,
) -> None:
    """Show an agent's compiled effective config: tools, skills, MCP servers, model, prompt."""
    from protoagent.api import data_home, show_agent
    from protoagent.errors import ConfigError

    try:
        if surface is None:
            effective = show_agent(name, mode.value if mode else None, _repo(repo), data_home())
        elif mode == ModeChoice.work:
            fail("--surface is for Coding leads; a Work lead runs one surface, shown without it", as_json)
        else:
            from protoagent.workflow.team import lead_on_surface

            effective = lead_on_surface(name, surface.value, _repo(repo), data_home(), profile.value)
    except ConfigError as exc:
        fail(str(exc), as_json)
    data = effective.to_json()
    if surface is not None:
        data["surface"] = surface.value
    if as_json:
        typer.echo(json.dumps(data))
        return
    for key in ("id", "mode", "role", "lead", "source", "path", "model", "description", "surface"):
        if key in data:
            typer.echo(f"{key}: {data[key] if data[key] is not None else '-'}")
    for key in ("tools", "skills", "mcp_servers"):
        typer.echo(f"{key}: {', '.join(data[key]) or '-'}")
    for line in data["ignored"]:
        typer.echo(f"ignored: {line}")
    typer.echo("prompt:\n" + str(data["prompt"]))


@agents_app.command("validate")
def agents_validate(repo: RepoOption = None, as_json: JsonOption = False) -> None:
    """Check every agent file; exit 2 listing 'file: problem' for each invalid one. Fields of a
    repository file that are ignored until trusted are listed as notes (they do not fail)."""
    from protoagent.api import agent_notices, data_home, validate_agents

    problems = validate_agents(_repo(repo), data_home())
    notices = agent_notices(_repo(repo), data_home())
    if as_json:
        out: dict[str, Any] = {
            "valid": not problems,
            "problems": [{"file": str(p.path), "problem": str(p)} for p in problems],
            "notices": notices,
        }
        typer.echo(json.dumps(out))
    else:
        for problem in problems:
            typer.echo(str(problem), err=True)
        for notice in notices:
            typer.echo(f"note: {notice}", err=True)
        if not problems:
            typer.echo("every agent file is valid")
    if problems:
        raise typer.Exit(EXIT_USAGE)


def _switch(name: str, enabled: bool, repo: Path | None) -> None:
    from protoagent.api import data_home, set_agent_enabled
    from protoagent.errors import ConfigError

    try:
        set_agent_enabled(data_home(), name, enabled, _repo(repo))
    except ConfigError as exc:
        fail(str(exc), False)
    typer.echo(f"{name}: {'on' if enabled else 'off'}")


@agents_app.command("enable")
def agents_enable(name: Annotated[str, typer.Argument(help="Agent name or id.")], repo: RepoOption = None) -> None:
    """Turn an agent on (the older form 'agents NAME on' still works)."""
    _switch(name, True, repo)


@agents_app.command("disable")
def agents_disable(name: Annotated[str, typer.Argument(help="Agent name or id.")], repo: RepoOption = None) -> None:
    """Turn an agent off: a disabled member is not offered to its lead."""
    _switch(name, False, repo)


@agents_app.command("trust")
def agents_trust(
    name: Annotated[str, typer.Argument(help="Agent name or id (coding/NAME) of a repository agent file.")],
    repo: RepoOption = None,
    as_json: JsonOption = False,
) -> None:
    """Trust a repository agent file's model and tools exactly as written now (kept per repository)."""
    from protoagent.api import data_home, trust_agent
    from protoagent.errors import ConfigError

    try:
        trusted = trust_agent(data_home(), name, _repo(repo))
    except ConfigError as exc:
        fail(str(exc), as_json)
    if as_json:
        typer.echo(json.dumps(trusted))
        return
    fields = trusted["trusted"]
    if not fields:
        typer.echo(f"{trusted['agent']}: its file names no model or extra tools; nothing to trust")
        return
    for field, value in fields.items():
        shown = value if isinstance(value, str) else ", ".join(value)
        typer.echo(f"{trusted['agent']}: trusted {field} {shown!r} for {trusted['repository']}")


def offer_trust(repo: Path, home: Path, lead: str | None) -> None:
    """Before a Coding run under ``--approval ask`` on a terminal: ask once about each agent of the
    run whose repository file names a model or tools that are ignored until trusted. Yes is kept
    as ``agents trust`` keeps it (this repository, these exact values); anything else leaves them
    ignored, and the run goes on with the person's own model."""
    from protoagent.api import trust_agent, untrusted_in_team

    for agent in untrusted_in_team(repo, home, lead):
        for line in agent.ignored:
            typer.echo(line, err=True)
        reply = input(f"trust what {agent.agent_id}'s file in {repo} names, for this repository? [y/N] ")
        if reply.strip().lower() in ("y", "yes"):
            trust_agent(home, agent.agent_id, repo)
            typer.echo(f"{agent.agent_id}: trusted; 'protoagent agents show {agent.agent_id}' shows it", err=True)
