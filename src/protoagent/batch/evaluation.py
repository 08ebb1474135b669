"""Local evaluation of a SWE-bench patch: does it make ``FAIL_TO_PASS`` pass and keep ``PASS_TO_PASS``?

A scratch clone at ``base_commit`` gets the model's patch, then the instance's ``test_patch``;
the test files the ids name are run once with pytest (``-rA``) under the instance's interpreter
(``--python``, else the environment the local clone's own folder holds, else the user's), through
the processes layer's command preparation and registry, inside the sandbox (no network). Each id
counts as passing when pytest reports it ``PASSED`` or ``XFAIL``; an id it never reports fails.

This is not the official containerized harness: there is no per-repository Docker image, no
pinned environment, no per-repository test command or log parser (only pytest node ids
``path::name`` are understood), and the tests see this machine's interpreter and packages.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from protoagent.batch.instances import SweBenchInstance
from protoagent.batch.isolation import clone_at
from protoagent.batch.patches import apply_patch
from protoagent.checks.interpreter import select_interpreter
from protoagent.errors import ProtoAgentError
from protoagent.processes.command import MAX_OUTPUT_LIMIT, SYSTEM_PATH, CommandRequest, CommandSite, prepare_command
from protoagent.processes.runner import ProcessRegistry, session_home
from protoagent.processes.sandbox import asks_each_command, sandbox_notice, select_sandbox

EVAL_TIMEOUT_S = 1800.0
"""Seconds the instance's tests may run before their process group is stopped."""
_READ_LIMIT = 8 << 20
_PASSING = frozenset({"PASSED", "XFAIL"})
_SUMMARY = re.compile(r"(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED) (\S.*)")


class EvaluationUnavailable(ProtoAgentError):
    """The instance's tests cannot be run here (no pytest ids, no sandbox)."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """How one instance's tests came out against the model's patch."""

    resolved: bool
    fail_to_pass_failing: tuple[str, ...] | None
    """``FAIL_TO_PASS`` ids that did not pass; None when no test ran."""
    pass_to_pass_failing: tuple[str, ...] | None
    python: str | None = None
    error: str | None = None
    """Why the tests did not run, or what cut them short."""

    def to_row(self) -> dict[str, Any]:
        def listed(ids: tuple[str, ...] | None) -> list[str] | None:
            return None if ids is None else list(ids)

        return {
            "resolved": self.resolved,
            "fail_to_pass_failing": listed(self.fail_to_pass_failing),
            "pass_to_pass_failing": listed(self.pass_to_pass_failing),
            "eval_python": self.python,
            "eval_error": self.error,
        }


def not_run(reason: str) -> Evaluation:
    return Evaluation(False, None, None, error=reason)


def evaluate(
    instance: SweBenchInstance, source: Path, patch: str, scratch: Path, python: str | None, data_home: Path
) -> Evaluation:
    """Score ``patch`` for ``instance`` in a new clone of ``source`` under ``scratch``."""
    if not patch.strip():
        return not_run("the model patch is empty; no test ran")
    try:
        files = named_test_files(instance)
        copy = clone_at(str(source), instance.base_commit, scratch / "eval")
    except ProtoAgentError as exc:
        return not_run(str(exc))
    for name, text in (("model patch", patch), ("test patch", instance.test_patch)):
        try:
            apply_patch(copy, text)
        except ProtoAgentError as exc:
            return not_run(f"the {name} does not apply at {instance.base_commit[:12]}: {exc}")
    interpreter = python or select_interpreter(source).path
    try:
        output, cut = _run_tests(copy.resolve(), interpreter, files, scratch / "eval-session", data_home)
    except (ProtoAgentError, OSError) as exc:
        return not_run(f"the tests could not run: {exc}")
    statuses = parse_statuses(output)
    f2p = tuple(i for i in instance.fail_to_pass if statuses.get(i) not in _PASSING)
    p2p = tuple(i for i in instance.pass_to_pass if statuses.get(i) not in _PASSING)
    return Evaluation(not f2p and not p2p, f2p, p2p, python=interpreter, error=cut)


def named_test_files(instance: SweBenchInstance) -> list[str]:
    """The test files the ids name, in order; an id that is no pytest node id is refused."""
    files: dict[str, None] = {}
    for test_id in (*instance.fail_to_pass, *instance.pass_to_pass):
        path = test_id.split("::", 1)[0]
        if "::" not in test_id or os.path.isabs(path) or ".." in Path(path).parts:
            raise EvaluationUnavailable(f"test id {test_id!r} is not a pytest node id (path::name); only those run")
        files[path] = None
    if not files:
        raise EvaluationUnavailable("the instance names no FAIL_TO_PASS or PASS_TO_PASS tests")
    return list(files)


def _run_tests(root: Path, python: str, files: list[str], artifacts: Path, data_home: Path) -> tuple[str, str | None]:
    """Run pytest on ``files`` in the sandbox; its output, and why it was cut short (or None)."""
    sandbox = select_sandbox("auto", data_home=data_home)
    if asks_each_command(sandbox):
        raise EvaluationUnavailable(f"{sandbox_notice(sandbox)}; install bubblewrap to evaluate")
    site = CommandSite(root=root, home=session_home(artifacts), python=python, sandbox=sandbox)
    argv = [python, "-m", "pytest", "-rA", "--tb=no", "-p", "no:cacheprovider", "--", *files]
    env = {"PATH": os.pathsep.join([os.path.dirname(python), SYSTEM_PATH]), "COLUMNS": "1000"}
    request = CommandRequest(argv=argv, env=env, timeout_s=EVAL_TIMEOUT_S, output_limit=MAX_OUTPUT_LIMIT)
    command = prepare_command(request, site)
    registry = ProcessRegistry()
    try:
        process = registry.start(command, artifacts_dir=artifacts, label="swe-bench tests", listed=False)
        process.wait_sync(EVAL_TIMEOUT_S + 4 * registry.grace_s)
        state = process.state()
        output = process.journal.read_text(_READ_LIMIT)
    finally:
        registry.shutdown()
    if state.timed_out:
        return output, f"the tests timed out after {EVAL_TIMEOUT_S:g} s"
    if not parse_statuses(output):
        last = next((line.strip() for line in reversed(output.splitlines()) if line.strip()), "no output")
        return output, f"pytest reported no test (exit {state.exit_code}): {last[:300]}"
    return output, None


def parse_statuses(output: str) -> dict[str, str]:
    """Each test id pytest's ``-rA`` summary names, with its last status (``PASSED``, ``FAILED`` …)."""
    statuses: dict[str, str] = {}
    for line in output.splitlines():
        match = _SUMMARY.match(line.strip())
        if match is None:
            continue
        status, rest = match.groups()
        if status != "PASSED" and " - " in rest:
            rest = rest.split(" - ", 1)[0]
        statuses[rest.strip()] = status
    return statuses
