"""The before-model hooks' order: one table, first to last.

A request passes every mounted hook in this order, each named by its one semantic owner. The
first hooks shape what the request declares and says, admission then fits it into the window,
and the last ones are the workflow's yields: they stop an agent before its request with a typed
signal (``protoagent.workflow.signals``), the first of them to find a reason wins.
"""

from __future__ import annotations

from typing import Literal, get_args

HookOwner = Literal[
    # Which of the lead's tools the request declares (workflow.offer): before every hook that
    # renders or measures the declared tools.
    "phase-offer",
    # The skill catalog and pre-model activation pairs (hooks.skills): before the compact
    # protocol, which keeps the system text as the role's instructions.
    "skills",
    # Old tool results become receipts (hooks.projection): before the compact protocol, which
    # writes the declared tools into JSON-mode prompts, since projection decides whether
    # ``recall`` is declared. Its budget counts messages only.
    "tool-context-projection",
    # The repositories and their AGENTS.md chains (hooks.workspace_instructions): before the
    # compact protocol, for the same reason as the skills.
    "workspace-instructions",
    # The small profile's compact system prompt (hooks.compact_protocol).
    "compact-protocol",
    # Fits the request into the window and shows the task record (hooks.admission): after every
    # hook that changes the request's size.
    "context-admission",
    # Evicted skill activation pairs come back within their own budget (hooks.skills).
    "durable-skills",
    # The workflow's yields: a stuck lead (workflow.progress), an exhausted or reported worker
    # assignment (workflow.workers), a denial or a failing final check (workflow.phase_control),
    # passing final verification (workflow.closing).
    "progress",
    "work-yield",
    "phase-control",
    "verified-close",
]
"""Every hook owner, in the order hooks run."""

HOOK_ORDER: tuple[HookOwner, ...] = get_args(HookOwner)
