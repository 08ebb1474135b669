"""A scratch copy of the workspace where candidate edits are tried, never the workspace itself.

The copy (one per repair) leaves out version control, ProtoAgent's own folder and caches; large
environment folders (``.venv``, ``node_modules`` ...) are linked, not copied, so a check that runs
``.venv/bin/python`` still finds it. Checks run there exactly as captured (same argv, cwd and
environment rules, ``processes.command.prepare_command``; an interpreter inside the workspace and
the project folders its environment installs become the copy's) inside the run's sandbox, whose
writable scope is the scratch copy, and through the session's process registry (a process group
and an output journal each, stopped by Stop and Ctrl-C like every other command).

Two things keep a candidate's check fast and still real. A ``<python> -m pytest`` check that
failed at baseline first runs only the tests that failed (``repair.pytest_args``); the whole
check runs only for a candidate that passes them. And such a check runs in a child forked from
one server per check that imported pytest once (``repair.fork_checks``); any other check, or one
the server cannot take, runs as its own command.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from protoagent.checks.outcomes import classify
from protoagent.checks.types import CheckSpec
from protoagent.errors import RunError, ToolRejected
from protoagent.processes.command import NO_SANDBOX, CommandRequest, CommandSandbox, CommandSite, prepare_command
from protoagent.processes.runner import ProcessRegistry
from protoagent.repair.copy_imports import copied_path, in_copy
from protoagent.repair.fork_checks import ForkFailed, ForkServer
from protoagent.repair.pytest_args import failing_ids, narrowed, not_selected, runs_pytest_module

LEFT_OUT = frozenset({".git", ".protoagent", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
LINKED = frozenset({".venv", "venv", "env", ".tox", ".nox", "node_modules", "target"})
MAX_OUTPUT_BYTES = 1 << 20
OUTPUT_LIMIT = 8192


@dataclass(frozen=True, slots=True)
class ScratchRun:
    """How one check ended in the scratch copy."""

    check_id: str
    passed: bool
    outcome: str
    output: str
    narrowed: bool = False
    """Only the baseline's failing tests ran (they failed, so the whole check was not run)."""
    forked: bool = False
    """The run was a child of the check's fork server."""
    tests_run: int | None = None


@dataclass(frozen=True, slots=True)
class _Ended:
    exit_code: int | None
    output: str
    timed_out: bool
    terminated: bool = False
    forked: bool = False


@dataclass(slots=True)
class ScratchOptions:
    """How checks run in the copy: the tests that failed at baseline and whether to fork."""

    failing: Mapping[str, str] = field(default_factory=dict)
    """Check id -> the output of its failing baseline run (its failing tests are run first)."""
    fork: bool = True


class ScratchWorkspace:
    """A temporary copy of ``root``; a context manager that removes it and stops its servers."""

    def __init__(
        self,
        root: Path,
        python: str,
        sandbox: CommandSandbox = NO_SANDBOX,
        *,
        processes: ProcessRegistry,
        options: ScratchOptions | None = None,
    ) -> None:
        self.source = root
        self._base = Path(tempfile.mkdtemp(prefix="protoagent-repair-"))
        self.root = self._base / "workspace"
        self._home = self._base / "home"
        self._home.mkdir()
        (self._base / "tmp").mkdir()
        _copy(root, self.root)
        self.python = copied_path(python, root, self.root)
        self._session_python = python
        self.sandbox = sandbox
        self.processes = processes
        self.options = options or ScratchOptions()
        self._servers: dict[str, ForkServer] = {}
        """Check id -> its fork server (a new one replaces one stopped after a timeout)."""
        self._unforked: set[str] = set()
        """Checks that run as commands of their own (not ``python -m pytest``, or the server failed)."""
        self._unnarrowed: set[str] = set()
        """Checks whose baseline ids selected no test: they always run whole."""

    def __enter__(self) -> ScratchWorkspace:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        for server in self._servers.values():
            server.close()
        self._servers.clear()
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
        """Run ``check`` in the copy; ``passed`` only when the whole check passed with at least one
        test. A check with failing baseline tests runs those first and stops there when they fail.
        The check imports the project from the copy (``repair.copy_imports``)."""
        check = in_copy(check, self.source, self.root, self._session_python)
        site = CommandSite(self.root, self._home, self.python, self.sandbox)
        request = CommandRequest(check.argv, check.cwd, check.env, timeout_s, OUTPUT_LIMIT)
        try:
            command = prepare_command(request, site)
        except ToolRejected as rejection:
            return ScratchRun(check.id, False, "error", rejection.message)
        ids = failing_ids(self.options.failing.get(check.id, ""), command.cwd)
        argv = narrowed(check.argv, command.cwd, ids) if check.id not in self._unnarrowed else None
        unselected = False
        if argv is not None:
            first = await self._run(check, argv, site, request)
            unselected = not_selected(first.exit_code, first.output)
            verdict = self._verdict(check, first, command.cwd, narrowed=True)
            if not unselected and not verdict.passed:
                return verdict
        whole = self._verdict(check, await self._run(check, check.argv, site, request), command.cwd)
        if unselected and whole.tests_run:
            self._unnarrowed.add(check.id)  # the whole check collects, the ids selected nothing: stale ids
        return whole

    async def _run(self, check: CheckSpec, argv: tuple[str, ...], site: CommandSite, request: CommandRequest) -> _Ended:
        server = await self._server(check, site, request)
        if server is not None:
            try:
                ran = await server.run(argv[3:], request.timeout_s)
                return _Ended(ran.exit_code, ran.output, ran.timed_out, forked=True)
            except ForkFailed:
                self._unforked.add(check.id)  # it died under a candidate: later runs are commands of their own
        return await self._spawn(CommandRequest(argv, check.cwd, check.env, request.timeout_s, OUTPUT_LIMIT), site)

    async def _server(self, check: CheckSpec, site: CommandSite, request: CommandRequest) -> ForkServer | None:
        """The check's running fork server, started on first use (again after a timeout stopped it)."""
        if check.id in self._unforked or not self.options.fork or not runs_pytest_module(check.argv):
            return None
        server = self._servers.get(check.id)
        if server is not None and server.alive:
            return server
        try:
            self._servers[check.id] = await ForkServer.start(check.argv, request, site, self.processes, self._base)
        except ForkFailed:
            self._unforked.add(check.id)
            return None
        return self._servers[check.id]

    async def _spawn(self, request: CommandRequest, site: CommandSite) -> _Ended:
        """One command of the session's process registry: its own group and journal."""
        try:
            command = prepare_command(request, site)
            process = self.processes.start(command, artifacts_dir=self._base, label=request.argv[0], listed=False)
        except ToolRejected as rejection:
            return _Ended(None, rejection.message, False)
        except (OSError, RunError) as error:
            return _Ended(None, f"could not start {request.argv[0]!r}: {error}", False)
        try:
            await process.wait(None)
        except BaseException:
            process.kill()
            raise
        finally:
            self.processes.forget(process.id)
        state = process.state()
        output = process.journal.read_text(MAX_OUTPUT_BYTES)
        return _Ended(state.exit_code, output, state.timed_out, state.terminated)

    def _verdict(self, check: CheckSpec, ended: _Ended, cwd: Path, *, narrowed: bool = False) -> ScratchRun:
        verdict = classify(
            ended.exit_code,
            ended.output,
            timed_out=ended.timed_out,
            terminated=ended.terminated,
            bases=(str(self.root), str(cwd)),
            pytest=_runs_pytest(check.argv),
        )
        passed = verdict.outcome == "passed" and bool(verdict.tests_run)
        return ScratchRun(check.id, passed, verdict.outcome, ended.output, narrowed, ended.forked, verdict.tests_run)


def _runs_pytest(argv: tuple[str, ...]) -> bool:
    return any(Path(arg).name in ("pytest", "py.test") for arg in argv) or "pytest" in argv[1:3]


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
