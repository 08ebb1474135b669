"""Repository checks: project configuration, static discovery and interpreter selection.

Nothing here executes a command or imports project code; running checks belongs to the
command runner.
"""

from __future__ import annotations

from protoagent.checks.config import PROJECT_CONFIG_PATH, ProjectConfig, ProjectConfigError, load_project_config
from protoagent.checks.discovery import discover_checks
from protoagent.checks.interpreter import Interpreter, select_interpreter
from protoagent.checks.plan import plan_checks
from protoagent.checks.report import checks_report, render_checks_text
from protoagent.checks.types import (
    BOOTSTRAP_CHECK_ID,
    MAX_DEPENDENCY_FILES,
    CheckPlan,
    CheckSource,
    CheckSpec,
)

__all__ = [
    "BOOTSTRAP_CHECK_ID",
    "MAX_DEPENDENCY_FILES",
    "PROJECT_CONFIG_PATH",
    "CheckPlan",
    "CheckSource",
    "CheckSpec",
    "Interpreter",
    "ProjectConfig",
    "ProjectConfigError",
    "checks_report",
    "discover_checks",
    "load_project_config",
    "plan_checks",
    "render_checks_text",
    "select_interpreter",
]
