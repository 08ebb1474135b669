"""What the editor may switch and type: approval policies as ACP session modes, and the slash
commands a session offers (skills, MCP prompts) as ``available_commands_update``."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    SessionMode,
    SessionModeState,
    UnstructuredCommandInput,
)

from protoagent.tools.approvals import Policy

MODES: dict[str, str] = {
    "ask": "Ask before every file write and command",
    "auto-edit": "Write files inside the task's paths without asking; ask for commands",
    "auto": "Allow every effect inside the workspace (commands only inside a sandbox)",
    "deny": "Deny every effect: read and answer only",
}
"""The approval policies an editor can switch between (``never`` is for unwatched sessions)."""


def mode_state(current: Policy) -> SessionModeState:
    """The modes offered and the one in force (``never``, which is no mode, shows as ``deny``)."""
    shown = current if current in MODES else "deny"
    modes = [SessionMode(id=mode, name=mode, description=text) for mode, text in MODES.items()]
    return SessionModeState(current_mode_id=shown, available_modes=modes)


def policy_for_mode(mode_id: str) -> Policy | None:
    """The approval policy of ``mode_id``, or ``None`` for an unknown mode."""
    return cast(Policy, mode_id) if mode_id in MODES else None


def available_commands(repo: Path, home: Path, mcp: bool) -> AvailableCommandsUpdate:
    """The session's slash commands: ``/compact``, ``/rewind``, each skill a person may call by name
    (``/skill:NAME``) and, with MCP on, the MCP prompt form (``/mcp:SERVER:PROMPT``)."""
    from protoagent.skills.discovery import load_skills

    hint = AvailableCommandInput(root=UnstructuredCommandInput(hint="what the skill should work on"))
    focus = AvailableCommandInput(root=UnstructuredCommandInput(hint="what the summary should keep (optional)"))
    compact = "Summarize the conversation so far; the next prompt follows the summary"
    checkpoint = AvailableCommandInput(root=UnstructuredCommandInput(hint="[N|verified] [code|conversation|both]"))
    rewind = (
        "Rewind to the state after user turn N (default: the turn before the last) or the latest verified one: "
        "put back the files the session wrote, hide the later turns from the model, or both"
    )
    commands = [
        AvailableCommand(name="compact", description=compact, input=focus),
        AvailableCommand(name="rewind", description=rewind, input=checkpoint),
    ]
    commands += [
        AvailableCommand(name=f"skill:{bundle.name}", description=bundle.description[:200], input=hint)
        for bundle in load_skills([repo], home).management()
        if bundle.valid and bundle.preferences.manual
    ]
    if mcp:
        prompt = AvailableCommandInput(root=UnstructuredCommandInput(hint="SERVER:PROMPT [arguments]"))
        commands.append(AvailableCommand(name="mcp:", description="Run an MCP server's prompt", input=prompt))
    return AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)
