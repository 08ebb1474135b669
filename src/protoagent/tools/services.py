"""``RunServices``: what a session's tools and agents share, as one typed, frozen value.

The run's wiring is visible here rather than in string keys: ``workflow.run`` provides what the
run computed (check plan, interpreter, sandbox, skills, MCP broker ...), ``AgentSession`` adds
what it owns (process and preview registries, its log, further roots) and later what needs the
session itself (task board, workers, compactor) through ``AgentSession.provide``. Every tool
call's ``ToolContext.services`` is the session's value at that moment. A field is ``None`` (or
empty) where a session has no such service; a reader that needs one refuses with a one-line
``ConfigError`` or ``ToolRejected``.

The field types name classes of higher layers for the type checker only: nothing here imports
them at run time, so the tools layer stays below them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from protoagent.checks.tracked import RunnerRevisions
    from protoagent.checks.types import CheckPlan
    from protoagent.context.compaction import Compactor
    from protoagent.events.log import SessionLog
    from protoagent.integrations.mcp_broker import MCPBroker
    from protoagent.processes.command import CommandSandbox
    from protoagent.processes.preview import PreviewRegistry
    from protoagent.processes.runner import ProcessRegistry
    from protoagent.skills.runtime import SkillRuntime
    from protoagent.workflow.board import TaskBoard
    from protoagent.workflow.workers import WorkerRunner


@dataclass(frozen=True, slots=True)
class RunServices:
    """The services of one session; see the module docstring for who provides each."""

    processes: ProcessRegistry | None = None
    """The model's command processes (``shell``, ``process``, checks); the session makes one."""
    previews: PreviewRegistry | None = None
    """Preview servers, apart from the command processes; the session makes one."""
    session_log: SessionLog | None = None
    """The session's log, read back by ``recall``; set by the session."""
    extra_roots: tuple[Path, ...] = ()
    """Further repositories of a multi-repository session (the primary root is the tools' root)."""
    python: str | None = None
    """The selected interpreter (commands and checks); ``None``: the running one."""
    sandbox: CommandSandbox | None = None
    """What every command runs under; ``None``: no sandbox."""
    checks: CheckPlan | None = None
    """The run's discovered checks (``run_check``)."""
    check_runners: RunnerRevisions | None = None
    """What each check runs, captured before any command of the run (a replaced runner is noticed)."""
    changed_files: Callable[[], Iterable[str]] | None = None
    """The files the run changed so far (a check names them)."""
    data_home: Path | None = None
    """Where ``code_context`` keeps its index cache; ``None``: the default."""
    skills: SkillRuntime | None = None
    """The session's skills (``skill``, offered tools a loaded skill activates)."""
    mcp_broker: MCPBroker | None = None
    """The MCP servers of the run (``mcp_*`` tools)."""
    scout_allow_hosts: str | Sequence[str] | None = None
    """Non-public hosts, addresses or networks (CIDR) Scout may reach (a string is split on commas)."""
    search_endpoint: str | None = None
    """Scout's search URL template (``{query}``); ``None``: the environment's or none."""
    task: TaskBoard | None = None
    """The run's task board (planning tools, check redirects)."""
    workers: WorkerRunner | None = None
    """The Architect's workers (``coder``, ``tester``, delegates)."""
    compactor: Compactor | None = None
    """Makes room when a request cannot fit; the agent loop asks it."""
    context_window: int | None = None
    """The model's context window in tokens when known (``read_file`` shows less under a small one)."""
