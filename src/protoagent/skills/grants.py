"""Which of a skill's tool dependencies the agent that loads it may be given.

A dependency never widens a role. It joins an agent's offer when the role already holds it, or
when its declared metadata keeps it inside the role: it names no other role, it is not a team or
workflow tool (effect ``none``: delegation, reports, task records are composed by the role and
its team, never by a skill), and its effect is reading or an effect the role already has (a role
that may write may use another write tool; a read-only role is never given a write or command
tool). Everything else is refused with a reason, and the skill does not activate.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from protoagent.tools.base import ToolMetadata

_WHAT = {"write": "change files", "execute": "run commands or reach outside the workspace"}


def dependency_refusals(
    tools: Sequence[str], agent: str, role_tools: Collection[str], metadata: Mapping[str, ToolMetadata]
) -> list[tuple[str, str]]:
    """``(tool, reason)`` for each dependency ``agent`` may not be given; empty when all may join."""
    held = {metadata[t].effect for t in role_tools if t in metadata}
    refused: list[tuple[str, str]] = []
    for tool in tools:
        meta = metadata.get(tool)
        if tool in role_tools:
            continue
        if meta is None:
            refused.append((tool, f"{tool!r} is not a tool of this session"))
        elif meta.roles and agent not in meta.roles:
            refused.append((tool, f"{tool!r} is only for {', '.join(sorted(meta.roles))}"))
        elif meta.effect == "none":
            refused.append((tool, f"{tool!r} is a team or workflow tool {agent}'s role is not given"))
        elif meta.effect != "read" and meta.effect not in held:
            refused.append((tool, f"{tool!r} would let {agent} {_WHAT[meta.effect]}, which its role may not"))
    return refused
