"""The frozen shapes of a check plan: ``CheckSpec`` (one command) and ``CheckPlan`` (all of them)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from protoagent.json_form import json_form

CheckSource = Literal["config", "discovery", "bootstrap"]
"""Where a check came from: the owner's project.json, static discovery, or the fixed bootstrap runner."""

MAX_DEPENDENCY_FILES = 512
"""The dependency inventory of a plan holds at most this many files (spec: "limited to 512 files")."""

BOOTSTRAP_CHECK_ID = "python-tests"
"""The fixed id of the bootstrap runner captured for a Python project without tests."""


@dataclass(frozen=True, slots=True)
class CheckSpec:
    """One repository check: an exact command captured before inference and never regenerated."""

    id: str
    """Stable, readable id the model selects (``pytest``, ``cargo-test``, ``npm-lint`` ...)."""
    argv: tuple[str, ...]
    """The exact command. ``argv[0]`` is absolute; or workspace-relative (contains a slash and
    resolves against the workspace root, not ``cwd``); or a bare name to look up on an explicit
    ``env["PATH"]``; or a bare runner name that was not found (then ``runner_unavailable`` says so)."""
    cwd: str = "."
    """Workspace-relative working directory (POSIX spelling)."""
    env: Mapping[str, str] = field(default_factory=dict, hash=False)
    """The explicit environment; nothing is inherited from the harness."""
    paths: tuple[str, ...] = ()
    """Declared workspace-relative dependency paths (files or directories)."""
    reason: str = ""
    """Why this check was chosen, in one sentence a person can check."""
    source: CheckSource = "discovery"
    """Where the check came from."""
    runner_unavailable: str | None = None
    """Set when the runner could not be found; running the check reports this instead of executing."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "argv", tuple(self.argv))
        object.__setattr__(self, "paths", tuple(self.paths))
        object.__setattr__(self, "env", MappingProxyType(dict(self.env)))

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-ready dict; ``runner_unavailable`` is always present (``None`` when available)."""
        return json_form(self)


@dataclass(frozen=True, slots=True)
class CheckPlan:
    """Every check available to a run, captured once before inference."""

    checks: tuple[CheckSpec, ...] = ()
    """Checks in a stable order: Python, Cargo, then npm; or the configured order."""
    bootstrap_checks: tuple[str, ...] = ()
    """Ids of runners for tests Coder must create (``python-tests``); not existing coverage."""
    config_path: str | None = None
    """Workspace-relative path of the project configuration whose checks were used, if any."""
    dependency_files: tuple[str, ...] = ()
    """Workspace-relative files that are revision dependencies of the checks (at most 512)."""
    dependency_files_truncated: bool = False
    """True when more dependency files existed than the inventory may hold."""
    notes: tuple[str, ...] = ()
    """Discovery remarks a person may need (skipped manifests, read budgets reached ...)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "checks", tuple(self.checks))
        object.__setattr__(self, "bootstrap_checks", tuple(self.bootstrap_checks))
        object.__setattr__(self, "dependency_files", tuple(self.dependency_files[:MAX_DEPENDENCY_FILES]))
        object.__setattr__(self, "notes", tuple(self.notes))

    @property
    def check_ids(self) -> tuple[str, ...]:
        """The ids of all checks, in plan order."""
        return tuple(check.id for check in self.checks)

    def get(self, check_id: str) -> CheckSpec | None:
        """The check with this id, or ``None``."""
        return next((check for check in self.checks if check.id == check_id), None)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the whole plan."""
        return json_form(self)
