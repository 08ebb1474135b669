"""``protoagent mcp``: list the MCP servers a run would use, and add, remove, enable or disable one."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from protoagent.errors import ConfigError
from protoagent.interfaces.cli.usage import fail

MCP_FILE = "mcp.json"
"""The user's MCP file under the data home (``integrations.mcp_config.MCP_FILE``; kept here so
``protoagent --help`` does not import the agent runtime)."""


def data_home() -> Path:
    from protoagent.api import data_home as home

    return home()


mcp_app = typer.Typer(
    help="List the MCP servers a run uses; add, remove, enable or disable one.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
RepoOption = Annotated[Path, typer.Option(help="Repository whose .mcp.json counts (and is written with --project).")]
ProjectOption = Annotated[bool, typer.Option("--project", help="Write the repository's .mcp.json, not your own file.")]
ServerName = Annotated[str, typer.Argument(help="Server name.")]


def _file(project: bool, repo: Path) -> Path:
    from protoagent.integrations.mcp_settings import mcp_file

    return mcp_file(project, repo, data_home())


@mcp_app.command("list")
def list_servers(
    repo: RepoOption = Path("."),
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    connect: Annotated[bool, typer.Option(help="Start trusted servers to list their tools.")] = True,
) -> None:
    """Servers, the file that declares each, its status and its tools."""
    from protoagent.integrations.mcp_status import server_statuses

    report = asyncio.run(server_statuses(repo.resolve(), data_home(), connect=connect))
    if as_json:
        typer.echo(json.dumps(report, indent=2))
        return
    if not report["servers"]:
        typer.echo(f"no MCP servers; add one with 'protoagent mcp add NAME -- COMMAND ARGS' ({data_home() / MCP_FILE})")
    for row in report["servers"]:
        typer.echo(
            f"{row['name']}  {row['status']}  {row['transport']} {row['target']}  ({row['origin']}: {row['source']})"
        )
        if row.get("error"):
            typer.echo(f"    {row['error']}")
        if row["tools"]:
            typer.echo(f"    tools: {', '.join(row['tools'])}")
    for line in report["diagnostics"]:
        typer.echo(f"warning: {line}", err=True)


@mcp_app.command("add")
def add(
    name: Annotated[str, typer.Argument(help="Server name.")],
    command: Annotated[list[str] | None, typer.Argument(help="Program and arguments (after --).")] = None,
    url: Annotated[str | None, typer.Option(help="URL of a remote (http or sse) server.")] = None,
    transport: Annotated[str, typer.Option("--type", help="stdio, http or sse.")] = "",
    env: Annotated[list[str] | None, typer.Option("--env", help="KEY=VALUE (repeatable; ${VAR} expands).")] = None,
    header: Annotated[list[str] | None, typer.Option("--header", help="Name=Value (repeatable).")] = None,
    trusted: Annotated[bool, typer.Option("--trusted", help="Let --approval auto call its tools.")] = False,
    replace: Annotated[bool, typer.Option("--replace", help="Replace a server of the same name.")] = False,
    project: ProjectOption = False,
    repo: RepoOption = Path("."),
) -> None:
    """Declare a server: 'protoagent mcp add time -- uvx mcp-server-time' or '--url https://...'."""
    try:
        from protoagent.integrations.mcp_files import add_server
        from protoagent.integrations.mcp_settings import server_entry

        entry = server_entry(command or [], url, transport, env or [], header or [], trusted, project)

        path = _file(project, repo)
        add_server(path, name, entry, replace=replace)
    except ConfigError as exc:
        fail(str(exc))
    typer.echo(f"added MCP server {name!r} to {path}")


def _change(project: bool, repo: Path, change: Callable[[Path], None]) -> Path:
    """Apply ``change`` to the MCP file ``--project`` picks, and return it; a refusal ends the command."""
    path = _file(project, repo)
    try:
        change(path)
    except ConfigError as exc:
        fail(str(exc))
    return path


@mcp_app.command("remove")
def remove(name: ServerName, project: ProjectOption = False, repo: RepoOption = Path(".")) -> None:
    """Remove a server from your file (or the repository's with --project)."""
    from protoagent.integrations.mcp_files import remove_server

    path = _change(project, repo, lambda file: remove_server(file, name))
    typer.echo(f"removed MCP server {name!r} from {path}")


def _switch(disabled: bool) -> Callable[[str, bool, Path], None]:
    """The ``enable`` (``disabled`` false) or ``disable`` command: they differ only in the flag set."""

    def switch(name: ServerName, project: ProjectOption = False, repo: RepoOption = Path(".")) -> None:
        from protoagent.integrations.mcp_files import set_disabled

        path = _change(project, repo, lambda file: set_disabled(file, name, disabled))
        typer.echo(f"{'disabled' if disabled else 'enabled'} MCP server {name!r} in {path}")

    return switch


@mcp_app.command("allow-env")
def allow_env(
    name: Annotated[str, typer.Argument(help="A server the repository's MCP file declares.")],
    variables: Annotated[list[str] | None, typer.Argument(help="Variables it may expand.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Allow none again.")] = False,
    repo: RepoOption = Path("."),
) -> None:
    """Let a repository's server expand ${VAR} from your environment (none may by default)."""
    import re

    from protoagent.integrations.mcp_trust import TrustStore

    chosen = [] if clear else list(variables or [])
    if not clear and not chosen:
        fail("name the variables to allow (e.g. 'protoagent mcp allow-env docs DOCS_TOKEN'), or pass --clear")
    bad = [v for v in chosen if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v)]
    if bad:
        fail(f"{bad[0]!r} is not a variable name; write it without '$' or braces")
    store = TrustStore(data_home())
    kept = [] if clear else store.allowed_env(repo.resolve()).get(name, [])
    store.allow_env(repo.resolve(), name, [*kept, *chosen])
    allowed = store.allowed_env(repo.resolve()).get(name, [])
    shown = ", ".join(allowed) or "no variables"
    typer.echo(f"MCP server {name!r} of {repo.resolve()} may expand {shown} from your environment")


mcp_app.command("enable", help="Turn a server back on.")(_switch(disabled=False))
mcp_app.command("disable", help="Turn a server off without removing it.")(_switch(disabled=True))
