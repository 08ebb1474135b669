"""``protoagent run``'s sandbox options: ``--sandbox``, ``--network`` and ``--writable``."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

import typer


class SandboxChoice(StrEnum):
    required = "required"
    auto = "auto"
    off = "off"


SANDBOX_HELP = (
    "Confine commands and checks: required (refuse to run without bubblewrap or Landlock), "
    "auto (sandbox when available, otherwise ask before each command) or off (unconfined)."
)
NETWORK_HELP = "Let sandboxed commands use the network (off by default)."
WRITABLE_HELP = "A folder outside the repository that sandboxed commands may also write (repeatable)."


def announce_sandbox(choice: SandboxChoice, network: bool, writable: list[Path]) -> bool:
    """Select the sandbox once, say on stderr when commands will not be confined, and return
    whether every command needs a person's approval. ``ConfigError`` when required and missing."""
    from protoagent.api import sandbox_notice, select_sandbox

    sandbox = select_sandbox(choice.value, network=network, writable=writable)
    notice = sandbox_notice(sandbox)
    if notice is not None:
        typer.echo(notice, err=True)
    return getattr(sandbox, "asks_each_command", False) is True
