"""The ``protoagent`` command. Entry points only wire parts together; heavy imports are lazy."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from protoagent.interfaces.cli.agents_cmd import ModeChoice, agents_app
from protoagent.interfaces.cli.sandbox_opts import (
    NETWORK_HELP,
    SANDBOX_HELP,
    WRITABLE_HELP,
    SandboxChoice,
    announce_sandbox,
)
from protoagent.interfaces.cli.usage import EXIT_USAGE, fail
from protoagent.interfaces.cli.worktree_opts import (
    WORKTREE_END_HELP,
    WORKTREE_HELP,
    WorktreeEndChoice,
    enter_worktree,
)

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
sessions_app = typer.Typer(help="List, show and fork recorded sessions.", no_args_is_help=True, rich_markup_mode=None)
app.add_typer(sessions_app, name="sessions")
app.add_typer(agents_app, name="agents")

EXIT_FAILED = 1
MODE_HELP = "work (a session workspace) or coding (a repository); default coding in a repository, else work."
REPO_HELP = (
    "Repository to work in (Coding mode); default the current folder. Repeat it for one session over "
    "several repositories: the first is the primary, where commands, checks and the baseline run; tools "
    "reach the others by absolute path."
)


class ApprovalChoice(StrEnum):
    ask = "ask"
    auto_edit = "auto-edit"
    auto = "auto"
    deny = "deny"


class ProfileChoice(StrEnum):
    auto = "auto"
    small = "small"
    standard = "standard"


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
    repo: Annotated[list[Path] | None, typer.Option(help=REPO_HELP, metavar="DIR")] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="Model spec: local, local:PATH, scripted:PATH, openai:MODEL, "
            "openai-compatible:URL#MODEL, anthropic:MODEL. Default: the lead agent's model, else local."
        ),
    ] = None,
    approval: Annotated[
        ApprovalChoice, typer.Option(help="Approval policy for file writes and commands.")
    ] = ApprovalChoice.ask,
    surface: Annotated[
        SurfaceChoice, typer.Option(help="Force the request's surface; auto classifies it.")
    ] = SurfaceChoice.auto,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object at the end.")] = False,
    profile: Annotated[
        ProfileChoice, typer.Option(help="Prompt profile: small, standard, or auto (by the model's context window).")
    ] = ProfileChoice.auto,
    sandbox: Annotated[SandboxChoice, typer.Option(help=SANDBOX_HELP)] = SandboxChoice.auto,
    network: Annotated[bool, typer.Option("--network", help=NETWORK_HELP)] = False,
    writable: Annotated[list[Path] | None, typer.Option(help=WRITABLE_HELP)] = None,
    mode: Annotated[ModeChoice | None, typer.Option(help=MODE_HELP)] = None,
    agent: Annotated[str | None, typer.Option(help="The lead agent of a new session (see 'agents list').")] = None,
    resume: Annotated[
        str | None, typer.Option(help="Continue this session with OBJECTIVE as the next message.")
    ] = None,
    worktree: Annotated[bool, typer.Option("--worktree", help=WORKTREE_HELP)] = False,
    worktree_end: Annotated[WorktreeEndChoice, typer.Option(help=WORKTREE_END_HELP)] = WorktreeEndChoice.keep,
) -> None:
    """Run OBJECTIVE in a repository and end with an evidence report.

    Exit codes: 0 completed, 1 failed, 2 usage or configuration error, 3 incomplete (unverified),
    130/143/129 stopped by SIGINT/SIGTERM/SIGHUP.
    """
    from rich.console import Console

    from protoagent.api import data_home, open_store
    from protoagent.errors import ConfigError
    from protoagent.interfaces.cli.agents_cmd import offer_trust
    from protoagent.interfaces.cli.render import TerminalRenderer, render_report, terminal_answerer
    from protoagent.interfaces.cli.run_target import resolve_target
    from protoagent.interfaces.cli.signals import Interrupted, run_until_signalled
    from protoagent.workflow.run import run_task
    from protoagent.workflow.run_options import run_options
    from protoagent.workflow.worktree import close_worktree

    console = Console(stderr=as_json)
    renderer = None if as_json else TerminalRenderer(console)
    try:
        asks = announce_sandbox(sandbox, network, writable or [])
    except ConfigError as exc:
        fail(str(exc), as_json)
    asking = approval is ApprovalChoice.ask or (asks and approval is ApprovalChoice.auto)
    answerer = terminal_answerer(console) if asking and not as_json else None
    forced = None if surface is SurfaceChoice.auto else cast("Surface", surface.value)
    with open_store() as store:
        try:
            target, extra, chosen_mode = resolve_target(store, repo or [], mode.value if mode else None, agent, resume)
            opened = enter_worktree(target, resume, chosen_mode, data_home()) if worktree else None
            target = opened.root if opened is not None else target
            if approval is ApprovalChoice.ask and answerer is not None and chosen_mode != "work" and resume is None:
                offer_trust(target, data_home(), agent)  # a repository agent file's model: asked once
        except ConfigError as exc:
            fail(str(exc), as_json)
        options = replace(
            run_options(target, model, store, data_home()),
            extra_repos=extra,
            mode=chosen_mode,
            agent=agent,
            resume=resume,
            approval=approval.value,
            answerer=answerer,
            surface=forced,
            profile=profile.value,
            on_event=renderer,
            sandbox=sandbox.value,
            network=network,
            writable=tuple(writable or ()),
        )
        try:
            report = run_until_signalled(run_task(objective, options))
        except ConfigError as exc:
            fail(str(exc), as_json)
        except Interrupted as stop:
            stopped = "every started command was stopped; the session log records the run"
            typer.echo(f"interrupted ({stop}): {stopped}", err=True)
            raise typer.Exit(stop.exit_code) from None
        finally:
            if opened is not None:
                typer.echo(close_worktree(opened, worktree_end.value), err=True)
    if as_json:
        typer.echo(json.dumps(report.to_json()))
    else:
        render_report(console, report)
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
        for warning in getattr(store, "list_warnings", ()):
            typer.echo(f"warning: {warning}", err=True)
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
    from protoagent.api import open_store, session_facts
    from protoagent.errors import SessionLoadError

    with open_store() as store:
        try:
            events = store.load(session_id)
        except SessionLoadError as exc:
            fail(str(exc), as_json)
    if as_json:
        facts = session_facts(session_id, events)
        payload = facts.to_json()
        typer.echo(json.dumps({**payload, "events": [e.model_dump() for e in events]}))
        return
    for e in events:
        where = f"t{e.turn}.s{e.step}" if e.turn is not None else ""
        typer.echo(f"{e.seq:>5} {e.type:<20} {e.agent:<10} {where:<8} {_brief(e.payload)}")


def _register_batch() -> None:
    from protoagent.interfaces.cli.batch_cmd import batch

    app.command(name="batch")(batch)


_register_batch()


def _register_skills() -> None:
    from protoagent.interfaces.cli.skills_cmd import skills_app

    app.add_typer(skills_app, name="skills")


_register_skills()


def _register_mcp() -> None:
    from protoagent.interfaces.cli.mcp_cmd import mcp_app

    app.add_typer(mcp_app, name="mcp")


_register_mcp()


def _register_code_context() -> None:
    from protoagent.interfaces.cli.code_context_cmd import code_context

    app.command(name="code-context")(code_context)


_register_code_context()


@app.command()
def diff(
    session_id: Annotated[str, typer.Argument(help="Session id from 'sessions list'.")],
    turn: Annotated[int | None, typer.Option(help="Only this user turn's changes (1 is the first).")] = None,
) -> None:
    """Print a session's file changes as a unified diff, from its log (not from git)."""
    from protoagent.interfaces.cli.checkpoint_cmds import diff_command

    raise typer.Exit(diff_command(session_id, turn))


@app.command()
def rewind(
    session_id: Annotated[str, typer.Argument(help="Session id from 'sessions list'.")],
    to: Annotated[int | None, typer.Option(help="The checkpoint: the state after user turn N (0: before it).")] = None,
    to_verified: Annotated[bool, typer.Option("--to-verified", help="The latest checkpoint a check verified.")] = False,
    code: Annotated[bool, typer.Option("--code", help="Restore files only.")] = False,
    conversation: Annotated[bool, typer.Option("--conversation", help="Hide later turns from the model only.")] = False,
    both: Annotated[bool, typer.Option("--both", help="Files and conversation (the default).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Rewind a session to a checkpoint: restore the files it wrote, hide later turns from the model.

    Refuses, changing nothing, when a file changed outside the session since it wrote it.
    """
    from protoagent.errors import ConfigError
    from protoagent.interfaces.cli.checkpoint_cmds import rewind_command, scope_of

    try:
        scope = scope_of(code, conversation, both)
    except ConfigError as exc:
        fail(str(exc), as_json)
    raise typer.Exit(rewind_command(session_id, to, to_verified, scope, as_json))


@app.command()
def commit(
    session_id: Annotated[str, typer.Argument(help="Session id from 'sessions list'.")],
    approval: Annotated[
        ApprovalChoice, typer.Option(help="ask: approve the previewed commit here; auto: commit without asking.")
    ] = ApprovalChoice.ask,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Commit exactly the files the session changed, with a message from its evidence.

    Git's hooks and the repository's configured programs never run (they are switched off for
    every git command ProtoAgent runs, not skipped by --no-verify).
    """
    from protoagent.interfaces.cli.commit_cmd import commit_command

    raise typer.Exit(commit_command(session_id, approval.value, as_json))


@sessions_app.command("fork")
def sessions_fork(
    session_id: Annotated[str, typer.Argument(help="Session id from 'sessions list'.")],
    to: Annotated[int | None, typer.Option(help="Fork from the state after user turn N (default the latest).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Start a new, independent session from a checkpoint of another; continue it with run --resume."""
    from protoagent.interfaces.cli.checkpoint_cmds import fork_command

    raise typer.Exit(fork_command(session_id, to, as_json))


@app.command()
def checks(
    repo: Annotated[Path, typer.Option(help="Repository to inspect.")] = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the checks ProtoAgent would run for a repository, and why each was chosen."""
    from protoagent.interfaces.cli.checks_cmd import checks_command

    raise typer.Exit(checks_command(repo, as_json))


@app.command()
def models(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    model: Annotated[
        str | None, typer.Option(help="Also show what is detected for this model spec: context window, profile.")
    ] = None,
) -> None:
    """List model providers, the default model and whether the embedded model is installed."""
    from protoagent.interfaces.cli.models_cmd import models_command

    raise typer.Exit(models_command(as_json, model))


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8765,
    token: Annotated[str | None, typer.Option(hidden=True, help="Refused: visible to every local user.")] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(help="Read the bearer token from this file (else $PROTOAGENT_TOKEN, else a new one is printed)."),
    ] = None,
    root: Annotated[
        list[Path] | None, typer.Option(help="Folder runs may work in (repeatable); default the current folder.")
    ] = None,
) -> None:
    """Serve the web UI and its JSON API (sessions, runs, approvals, live events); every request needs the token."""
    from protoagent.interfaces.cli.serve_cmd import serve_command

    raise typer.Exit(serve_command(host, port, token_file, root or [], token))


@app.command()
def acp(
    model: Annotated[str, typer.Option(help="Model spec, as for 'run'.")] = "local",
    approval: Annotated[
        ApprovalChoice, typer.Option(help="Approval policy; 'ask' asks the editor.")
    ] = ApprovalChoice.ask,
) -> None:
    """Speak the Agent Client Protocol on stdin/stdout, for editors such as Zed."""
    from protoagent.interfaces.acp.server import serve_acp

    raise typer.Exit(serve_acp(model, approval.value))


@app.command()
def chat(
    repo: Annotated[Path, typer.Option(help="Repository to work in.")] = Path("."),
    model: Annotated[str, typer.Option(help="Model spec, as for 'run'.")] = "local",
    approval: Annotated[ApprovalChoice, typer.Option(help="Approval policy; 'ask' asks inline.")] = ApprovalChoice.ask,
) -> None:
    """Chat with the agent in this terminal: one session, streamed, with inline approvals."""
    from protoagent.interfaces.cli.chat import chat_command

    raise typer.Exit(chat_command(repo, model, approval.value))


def _brief(payload: dict[str, Any]) -> str:
    text = json.dumps(payload, ensure_ascii=False)
    return text if len(text) <= 100 else text[:99] + "…"


def main() -> None:
    from protoagent.errors import ConfigError, SessionLoadError

    try:
        app()
    except SystemExit as done:
        # A run stopped by a signal ends the process at once (only a run imports the module).
        signals = sys.modules.get("protoagent.interfaces.cli.signals")
        if signals is not None:
            signals.leave_if_stopped(done.code)
        raise
    except (ConfigError, SessionLoadError) as exc:
        # The last line of defence: a misconfiguration any command did not map itself is one
        # line naming the fix, exit 2, never a traceback.
        typer.echo(f"error: {exc}", err=True)
        raise SystemExit(EXIT_USAGE) from None
