"""Commands and long-running processes: exact preparation, process groups, the output journal
and the ``execute_command``, ``shell`` and ``process`` tools."""

from __future__ import annotations

from protoagent.processes.command import (
    DEFAULT_OUTPUT_LIMIT,
    DEFAULT_TIMEOUT_S,
    NO_SANDBOX,
    SYSTEM_PATH,
    CommandRequest,
    CommandSandbox,
    CommandSite,
    NoSandbox,
    PreparedCommand,
    prepare_command,
)
from protoagent.processes.journal import Observation, OutputJournal
from protoagent.processes.runner import ManagedProcess, ProcessRegistry, ProcessState
from protoagent.processes.tools import (
    PROCESS_TOOLS,
    ExecuteCommandTool,
    ProcessTool,
    ShellTool,
    process_tool_available,
    user_shell_call,
)

__all__ = [
    "DEFAULT_OUTPUT_LIMIT",
    "DEFAULT_TIMEOUT_S",
    "NO_SANDBOX",
    "PROCESS_TOOLS",
    "SYSTEM_PATH",
    "CommandRequest",
    "CommandSandbox",
    "CommandSite",
    "ExecuteCommandTool",
    "ManagedProcess",
    "NoSandbox",
    "Observation",
    "OutputJournal",
    "PreparedCommand",
    "ProcessRegistry",
    "ProcessState",
    "ProcessTool",
    "ShellTool",
    "prepare_command",
    "process_tool_available",
    "user_shell_call",
]
