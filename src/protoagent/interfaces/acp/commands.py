"""What the editor may switch and type: approval policies as ACP session modes, and the slash
commands a session offers (compaction, rewind, skills, MCP prompts) as ``available_commands_update``."""

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

from protoagent.interfaces.acp.prompt_listing import PromptListing, ServerPrompt
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


def available_commands(repo: Path, home: Path, prompts: PromptListing | None) -> AvailableCommandsUpdate:
    """The session's slash commands: ``/compact``, ``/rewind``, each skill a person may call by name
    (``/skill:NAME``) and, with MCP on (``prompts`` given), each listed MCP prompt
    (``/mcp:SERVER:PROMPT``) and the general form for servers whose prompts are not listed."""
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
    if prompts is not None:
        commands += [_prompt_command(p) for p in prompts.prompts]
        if prompts.unlisted:
            unlisted = "; ".join(f"{server!r} ({why})" for server, why in prompts.unlisted)
            usage = AvailableCommandInput(root=UnstructuredCommandInput(hint="SERVER:PROMPT [arguments]"))
            about = f"Run an MCP server's prompt; not listed here: {unlisted}"
            commands.append(AvailableCommand(name="mcp:", description=about, input=usage))
    return AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)


def _prompt_command(prompt: ServerPrompt) -> AvailableCommand:
    """``/mcp:SERVER:PROMPT``: the prompt's description, and its arguments as the hint (the first
    may be free text, the others ``name=value``; optional ones in brackets)."""
    about = f"{prompt.description or f'MCP prompt {prompt.name!r}'} (MCP server {prompt.server!r})"
    words = []
    for index, (name, required) in enumerate(prompt.arguments):
        word = name if index == 0 else f"{name}=VALUE"
        words.append(word if required else f"[{word}]")
    usage = AvailableCommandInput(root=UnstructuredCommandInput(hint=" ".join(words))) if words else None
    return AvailableCommand(name=f"mcp:{prompt.server}:{prompt.name}", description=about, input=usage)
