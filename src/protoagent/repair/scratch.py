"""A scratch copy of the workspace where candidate edits are tried, never the workspace itself.

The copy leaves out version control, ProtoAgent's own folder and caches; large environment
folders (``.venv``, ``node_modules`` ...) are linked, not copied, so a check that runs
``.venv/bin/python`` still finds it. Checks run there exactly as captured (same argv, cwd and
environment rules, ``processes.command.prepare_command``) inside the run's sandbox, whose
writable scope is the scratch copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from protoagent.checks.outcomes import classify
from protoagent.checks.types import CheckSpec
from protoagent.errors import ToolRejected
from protoagent.processes.command import NO_SANDBOX, CommandRequest, CommandSite, SandboxProfile, prepare_command

LEFT_OUT = frozenset({".git", ".protoagent", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
LINKED = frozenset({".venv", "venv", "env", ".tox", ".nox", "node_modules", "target"})
MAX_OUTPUT_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class ScratchRun:
    """How one check ended in the scratch copy."""

    check_id: str
    passed: bool
    outcome: str
    output: str


class ScratchWorkspace:
    """A temporary copy of ``root``; a context manager that removes it."""

    def __init__(self, root: Path, python: str, sandbox: SandboxProfile = NO_SANDBOX) -> None:
        self.source = root
        self._base = Path(tempfile.mkdtemp(prefix="protoagent-repair-"))
        self.root = self._base / "workspace"
        self._home = self._base / "home"
        self._home.mkdir()
        (self._base / "tmp").mkdir()
        _copy(root, self.root)
        self.python = python
        self.sandbox = sandbox

    def __enter__(self) -> ScratchWorkspace:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        shutil.rmtree(self._base, ignore_errors=True)

    def write(self, path: str, text: str) -> None:
        """Replace a file of the copy (``path`` is workspace-relative and was checked by the caller)."""
        target = self.root / path
        if target.is_symlink() or not target.resolve().is_relative_to(self.root.resolve()):
            raise ToolRejected(f"{path!r} is not a file of the scratch copy", kind="path_outside_workspace")
        target.write_text(text, encoding="utf-8")

    def read(self, path: str) -> str:
        return (self.root / path).read_text(encoding="utf-8")

    async def run(self, check: CheckSpec, timeout_s: float) -> ScratchRun:
        """Run ``check`` in the copy; ``passed`` only when it passed with at least one test."""
        request = CommandRequest(check.argv, check.cwd, check.env, timeout_s, 8192)
        site = CommandSite(self.root, self._home, self.python, self.sandbox)
        try:
            command = prepare_command(request, site)
        except ToolRejected as rejection:
            return ScratchRun(check.id, False, "error", rejection.message)
        process = await asyncio.create_subprocess_exec(
            *command.spawn_argv(),
            cwd=command.cwd,
            env=command.environment,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        timed_out = False
        try:
            data, _ = await asyncio.wait_for(process.communicate(), timeout_s)
        except TimeoutError:
            timed_out, data = True, b""
        finally:
            if process.returncode is None:
                _kill_group(process.pid)
                await process.wait()
        output = data[-MAX_OUTPUT_BYTES:].decode("utf-8", "replace")
        runs_pytest = any(os.path.basename(arg) in ("pytest", "py.test") for arg in command.argv) or (
            "pytest" in command.argv[1:3]
        )
        verdict = classify(
            process.returncode,
            output,
            timed_out=timed_out,
            bases=(str(self.root), str(command.cwd)),
            pytest=runs_pytest,
        )
        passed = verdict.outcome == "passed" and bool(verdict.tests_run)
        return ScratchRun(check.id, passed, verdict.outcome, output)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _copy(source: Path, target: Path) -> None:
    target.mkdir()
    for entry in os.scandir(source):
        if entry.name in LEFT_OUT:
            continue
        path = Path(entry.path)
        if entry.name in LINKED and entry.is_dir(follow_symlinks=False):
            (target / entry.name).symlink_to(path.resolve(), target_is_directory=True)
        elif entry.is_dir(follow_symlinks=False):
            shutil.copytree(path, target / entry.name, symlinks=True, ignore=_ignored)
        else:
            shutil.copy2(path, target / entry.name, follow_symlinks=False)


def _ignored(directory: str, names: list[str]) -> set[str]:
    return {name for name in names if name in LEFT_OUT}
