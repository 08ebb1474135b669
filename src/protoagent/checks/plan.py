"""The check plan of a workspace: the owner's configured checks if any, otherwise discovery."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from protoagent.checks.config import ProjectConfig, load_project_config
from protoagent.checks.discovery import discover_checks
from protoagent.checks.interpreter import Interpreter
from protoagent.checks.inventory import DependencyInventory
from protoagent.checks.types import CheckPlan


def plan_checks(
    root: str | os.PathLike[str],
    python: str | Interpreter | None = None,
    *,
    config: ProjectConfig | None = None,
) -> CheckPlan:
    """Capture the workspace's checks once, before inference.

    ``.protoagent/project.json`` checks take precedence (``"checks": []`` disables discovery and
    the bootstrap runner); a file without ``checks`` leaves discovery on. Pass an already loaded
    ``config`` snapshot to avoid reading the file twice. Raises ``ProjectConfigError`` for a
    malformed file.
    """
    workspace = Path(os.path.abspath(root))
    snapshot = config if config is not None else load_project_config(workspace)
    if snapshot is None or snapshot.checks is None:
        plan = discover_checks(workspace, python)
        if snapshot is None:
            return plan
        note = f"{snapshot.path} sets no checks; discovery was used"
        return replace(plan, notes=(note, *plan.notes))
    inventory = DependencyInventory()
    for check in snapshot.checks:
        for path in check.paths:
            inventory.add_path(workspace, path)
    return CheckPlan(
        checks=snapshot.checks,
        config_path=snapshot.path,
        dependency_files=inventory.files(),
        dependency_files_truncated=inventory.truncated,
    )
