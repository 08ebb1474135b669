"""``protoagent diff``, ``rewind``, ``sessions fork`` and chat's ``/rewind``: a session's
checkpoints, from its log."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import typer

from protoagent.errors import ConfigError, SessionLoadError
from protoagent.workflow.checkpoints import RewindPlan, RewindRefused, Scope

if TYPE_CHECKING:
    from protoagent.events.store import SessionStore

EXIT_REFUSED = 1
EXIT_USAGE = 2


def diff_command(session_id: str, turn: int | None) -> int:
    """Print the session's changes (or one user turn's) as a unified diff; nothing when none."""
    from protoagent.api import open_store
    from protoagent.workflow.changes import session_changes, unified_diff, user_turns

    with open_store() as store:
        try:
            events = store.load(session_id)
        except SessionLoadError as exc:
            return _error(str(exc))
    if turn is not None and not 1 <= turn <= len(user_turns(events)):
        return _error(f"turn {turn} is not a user turn of {session_id}: choose 1 to {len(user_turns(events))}")
    typer.echo(unified_diff(session_changes(events, turn)), nl=False)
    return 0


def scope_of(code: bool, conversation: bool, both: bool) -> Scope:
    """The one scope the flags name (default both); several is a usage error."""
    named = [name for name, on in (("code", code), ("conversation", conversation), ("both", both)) if on]
    if len(named) > 1:
        raise ConfigError("choose one of --code, --conversation and --both")
    scope: Scope = "both"
    if named == ["code"]:
        scope = "code"
    elif named == ["conversation"]:
        scope = "conversation"
    return scope


def rewind_command(session_id: str, to: int | None, verified: bool, scope: Scope, as_json: bool) -> int:
    from protoagent.api import open_store
    from protoagent.workflow.checkpoints import rewind_session

    with open_store() as store:
        try:
            plan = rewind_session(store, session_id, to, verified=verified, scope=scope)
        except RewindRefused as exc:
            if as_json:
                conflicts = [{"path": c.path, "why": c.why} for c in exc.conflicts]
                typer.echo(json.dumps({"status": "refused", "error": str(exc), "conflicts": conflicts}))
            else:
                typer.echo(f"error: {exc}", err=True)
            return EXIT_REFUSED
        except (ConfigError, SessionLoadError) as exc:
            return _error(str(exc), as_json)
    if as_json:
        typer.echo(json.dumps({"status": "rewound", "session_id": session_id, **plan.payload()}))
    else:
        typer.echo(describe_rewind(session_id, plan))
    return 0


def describe_rewind(session_id: str, plan: RewindPlan) -> str:
    """What a rewind did, in a few lines a person reads (chat prints the same)."""
    lines = [f"rewound {session_id} to turn {plan.to_turn} ({plan.scope})"]
    restored = [r.path for r in plan.restores if r.text is not None]
    removed = [r.path for r in plan.restores if r.text is None]
    if plan.scope != "conversation":
        lines.append(
            f"restored: {', '.join(restored) or 'nothing'}" + (f"; removed: {', '.join(removed)}" if removed else "")
        )
    if plan.hidden_turns:
        turns = ", ".join(str(t) for t in plan.hidden_turns)
        lines.append(f"the model no longer sees turns {turns} (the log keeps them)")
    if plan.commands_since:
        lines.append("commands ran since the checkpoint; their side effects are not rewound:")
        lines += [f"  {c}" for c in plan.commands_since]
    if plan.command_changed_files:
        lines.append(f"files those commands changed: {', '.join(plan.command_changed_files)}")
    return "\n".join(lines)


def fork_command(session_id: str, to: int | None, as_json: bool) -> int:
    from protoagent.api import open_store
    from protoagent.workflow.checkpoints import fork_session

    with open_store() as store:
        try:
            new_id = fork_session(store, session_id, to)
        except (ConfigError, SessionLoadError) as exc:
            return _error(str(exc), as_json)
    out: dict[str, Any] = {"session_id": new_id, "forked_from": session_id}
    typer.echo(json.dumps(out) if as_json else f"{new_id} (forked from {session_id}; continue it with run --resume)")
    return 0


def _error(message: str, as_json: bool = False) -> int:
    if as_json:
        typer.echo(json.dumps({"status": "error", "error": message}))
    else:
        typer.echo(f"error: {message}", err=True)
    return EXIT_USAGE


def rewind_words(store: SessionStore, session_id: str, words: list[str]) -> str:
    """Chat's ``/rewind [N|verified] [code|conversation|both]`` (default: the turn before the
    last, both): rewind and say what was done; ``ConfigError`` says what blocked it."""
    from protoagent.workflow.changes import user_turns
    from protoagent.workflow.checkpoints import rewind_session

    scopes: dict[str, Scope] = {"code": "code", "conversation": "conversation", "both": "both"}
    scope: Scope = "both"
    to: int | None = None
    verified = False
    for word in words:
        if word in scopes:
            scope = scopes[word]
        elif word == "verified":
            verified = True
        elif word.isdigit():
            to = int(word)
        else:
            raise ConfigError(f"/rewind takes a turn number, 'verified' and code|conversation|both, not {word!r}")
    if to is None and not verified:
        to = max(len(user_turns(store.load(session_id))) - 1, 0)
    return describe_rewind(session_id, rewind_session(store, session_id, to, verified=verified, scope=scope))
