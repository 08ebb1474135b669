"""The one formatter for process observations: execute_command, shell (including a user's
``!command``) and the process tool all report through ``observe``.

The text is one status line followed by the newly observed output, exactly as journalled
(bounded, with at most one truncation marker); the data is the receipt.
"""

from __future__ import annotations

from typing import Any

from protoagent.processes.journal import Observation
from protoagent.processes.runner import ManagedProcess, ProcessState
from protoagent.tools.base import ToolOutput


def observe(process: ManagedProcess) -> ToolOutput:
    """Consume the output ``process`` produced since the last observation and report it.

    The state is read first, so a process reported as finished has all its output observed.
    """
    state = process.state()
    observation = process.journal.consume(process.command.output_limit, settled=not state.running)
    failed = not state.running and (state.exit_code != 0 or state.timed_out)
    text = status_line(process, state)
    if observation.text:
        text = f"{text}\n{observation.text}"
    artifact = process.journal.artifact
    return ToolOutput(
        text=text,
        status="error" if failed else "ok",
        data=receipt(process, state, observation),
        artifact=None if artifact is None else str(artifact),
    )


def status_line(process: ManagedProcess, state: ProcessState) -> str:
    """One line saying whether ``process`` runs or how it ended."""
    if state.running:
        return (
            f"process {process.id} is still running (pid {process.pid}, {state.duration_s:g} s); "
            f"use the process tool to poll, wait for or terminate it"
        )
    code = state.exit_code
    if state.timed_out:
        return f"timed out after {process.command.timeout_s:g} s; process group stopped (exit code {code})"
    if state.terminated:
        return f"terminated; process group stopped (exit code {code})"
    return f"exit code: {code}"


def receipt(process: ManagedProcess, state: ProcessState, observation: Observation) -> dict[str, Any]:
    """Structured facts of ``process`` for the tool receipt. ``artifact`` is None when the whole
    output fits the inline limit (the observation holds all of it) and no file was written."""
    artifact = process.journal.artifact
    return {
        "process_id": process.id,
        "running": state.running,
        "exit_code": state.exit_code,
        "timed_out": state.timed_out,
        "terminated": state.terminated,
        "argv": list(process.command.argv),
        "cwd": str(process.command.cwd),
        "duration_s": state.duration_s,
        "artifact": None if artifact is None else str(artifact),
        "observed_bytes": [observation.start, observation.end],
        "omitted_bytes": observation.omitted,
    }


def listing(processes: list[ManagedProcess]) -> str:
    """One line per shell process: id, state, duration, unread bytes and command."""
    if not processes:
        return "no processes were started in this session"
    lines = []
    for process in processes:
        state = process.state()
        if state.running:
            word = "running"
        elif state.timed_out:
            word = f"timed out ({state.exit_code})"
        elif state.terminated:
            word = f"terminated ({state.exit_code})"
        else:
            word = f"exited {state.exit_code}"
        unread = process.journal.size - process.journal.observed
        lines.append(f"{process.id}  {word}  {state.duration_s:g} s  {unread} unread bytes  {process.label}")
    return "\n".join(lines)
