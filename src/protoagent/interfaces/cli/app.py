"""The ``protoagent`` command. Entry points only wire parts together; heavy imports are lazy."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

if TYPE_CHECKING:
    from protoagent.workflow.contract import Surface

app = typer.Typer(
    name="protoagent",
    help="ProtoAgent: a coding-agent harness that turns an objective into governed model work and evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help keeps start-up fast: typer's rich help formatter alone costs ~60 ms to import.
    rich_markup_mode=None,
)
sessions_app = typer.Typer(help="List and show recorded sessions.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(sessions_app, name="sessions")
agents_app = typer.Typer(
    help="Turn optional agents (tester, scout, mcp) on or off.", rich_markup_mode=None, invoke_without_command=True
)
app.add_typer(agents_app, name="agents")

EXIT_FAILED = 1
EXIT_USAGE = 2


class ApprovalChoice(StrEnum):
    ask = "ask"
    auto_edit = "auto-edit"
    auto = "auto"
    deny = "deny"


class SurfaceChoice(StrEnum):
    auto = "auto"
    conversation = "conversation"
    question = "question"
    verification = "verification"
    editing = "editing"


EXIT_INCOMPLETE = 3
EXIT_INTERRUPTED = 130


@app.command()
def run(
    objective: Annotated[str, typer.Argument(help="What you want done, in plain words.")],
    repo: Annotated[Path, typer.Option(help="Repository to work in.")] = Path("."),
    model: Annotated[
        str,
        typer.Option(
            help="Model spec: local, local:PATH, scripted:PATH, openai:MODEL, "
            "openai-compatible:URL#MODEL, anthropic:MODEL."
        ),
    ] = "local",
    approval: Annotated[
        ApprovalChoice, typer.Option(help="Approval policy for file writes and commands.")
    ] = ApprovalChoice.ask,
    surface: Annotated[
        SurfaceChoice, typer.Option(help="Force the request's surface; auto classifies it.")
    ] = SurfaceChoice.auto,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object at the end.")] = False,
) -> None:
    """Run OBJECTIVE in a repository and end with an evidence report.

    Exit codes: 0 completed, 1 failed, 2 usage or configuration error, 3 incomplete (unverified).
    """
    import asyncio

    from rich.console import Console

    from protoagent.api import data_home, open_store
    from protoagent.errors import ConfigError
    from protoagent.interfaces.cli.render import TerminalRenderer, render_report, terminal_answerer
    from protoagent.settings import agent_enabled
    from protoagent.workflow.run import RunOptions, run_task

    console = Console(stderr=as_json)
    renderer = None if as_json else TerminalRenderer(console)
    answerer = terminal_answerer(console) if approval is ApprovalChoice.ask and not as_json else None
    forced = None if surface is SurfaceChoice.auto else cast("Surface", surface.value)
    with open_store() as store:
        options = RunOptions(
            repo=repo,
            model=model,
            store=store,
            approval=approval.value,
            answerer=answerer,
            surface=forced,
            tester=agent_enabled(data_home(), "tester"),
            scout=agent_enabled(data_home(), "scout"),
            mcp=agent_enabled(data_home(), "mcp"),
            data_home=data_home(),
            on_event=renderer,
            artifacts_root=data_home() / "artifacts",
        )
        try:
            report = asyncio.run(run_task(objective, options))
        except ConfigError as exc:
            _fail(str(exc), as_json)
        except KeyboardInterrupt:
            typer.echo("interrupted: every started command was stopped; the session log records the run", err=True)
            raise typer.Exit(EXIT_INTERRUPTED) from None
    if as_json:
        typer.echo(json.dumps(report.to_json()))
    else:
        render_report(console, report.to_json())
    if report.status == "failed":
        raise typer.Exit(EXIT_FAILED)
    if report.status == "incomplete":
        raise typer.Exit(EXIT_INCOMPLETE)


@sessions_app.command("list")
def sessions_list(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List recorded sessions, oldest first."""
    from protoagent.api import open_store

    with open_store() as store:
        rows = store.list()
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {
                        "session_id": r.session_id,
                        "created": r.created,
                        "events": r.event_count,
                        "format_version": r.format_version,
                        "title": r.title,
                    }
                    for r in rows
                ]
            )
        )
        return
    for r in rows:
        typer.echo(f"{r.session_id}  {r.event_count:>6} events  {r.title}")


@sessions_app.command("show")
def sessions_show(
    session_id: Annotated[str, typer.Argument(help="Session id from 'sessions list'.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the events as JSON.")] = False,
) -> None:
    """Show the events of one session, in order."""
    from protoagent.api import open_store
    from protoagent.errors import SessionLoadError

    with open_store() as store:
        try:
            events = store.load(session_id)
        except SessionLoadError as exc:
            _fail(str(exc), as_json)
    if as_json:
        typer.echo(json.dumps({"session_id": session_id, "events": [e.model_dump() for e in events]}))
        return
    for e in events:
        where = f"t{e.turn}.s{e.step}" if e.turn is not None else ""
        typer.echo(f"{e.seq:>5} {e.type:<20} {e.agent:<10} {where:<8} {_brief(e.payload)}")


@app.command()
def checks(
    repo: Annotated[Path, typer.Option(help="Repository to inspect.")] = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the checks ProtoAgent would run for a repository, and why each was chosen."""
    from protoagent.interfaces.cli.checks_cmd import checks_command

    raise typer.Exit(checks_command(repo, as_json))


@app.command()
def models(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """List model providers, the default model and whether the embedded model is installed."""
    from protoagent.interfaces.cli.models_cmd import models_command

    raise typer.Exit(models_command(as_json))


class Switch(StrEnum):
    on = "on"
    off = "off"


@agents_app.callback()
def agents(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(help="Optional agent: tester, scout or mcp.")] = None,
    switch: Annotated[Switch | None, typer.Argument(help="on or off.")] = None,
) -> None:
    """Show optional agents, or turn one on or off: `protoagent agents tester off`."""
    from protoagent.api import data_home
    from protoagent.errors import ConfigError
    from protoagent.settings import OPTIONAL_AGENTS, agent_enabled, set_agent

    home = data_home()
    try:
        if name is not None and switch is not None:
            set_agent(home, name, switch is Switch.on)
        elif name is not None:
            _fail("say on or off, e.g. 'protoagent agents tester off'", False)
        for agent in OPTIONAL_AGENTS:
            typer.echo(f"{agent}: {'on' if agent_enabled(home, agent) else 'off'}")
    except ConfigError as exc:
        _fail(str(exc), False)


def _fail(message: str, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps({"status": "error", "error": message}))
    else:
        typer.echo(f"error: {message}", err=True)
    raise typer.Exit(EXIT_USAGE)


def _brief(payload: dict[str, Any]) -> str:
    text = json.dumps(payload, ensure_ascii=False)
    return text if len(text) <= 100 else text[:99] + "…"


def main() -> None:
    app()
