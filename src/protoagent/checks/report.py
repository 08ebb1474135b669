"""What ``protoagent checks`` shows: the captured plan, its source and the selected interpreter."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

from protoagent.checks.config import load_project_config
from protoagent.checks.interpreter import select_interpreter
from protoagent.checks.plan import plan_checks


def checks_report(
    root: str | os.PathLike[str],
    host_executable: str | None = sys.executable,
    *,
    host_binary: str | None = None,
) -> dict[str, Any]:
    """The workspace's check plan as a JSON-ready dict. Raises ``ProjectConfigError`` on a bad config.

    ``host_executable`` and ``host_binary`` are passed to :func:`select_interpreter`.
    """
    workspace = Path(os.path.abspath(root))
    config = load_project_config(workspace)
    interpreter = select_interpreter(workspace, host_executable, host_binary=host_binary)
    plan = plan_checks(workspace, interpreter, config=config)
    return {
        "root": str(workspace),
        "config": plan.config_path,
        "checks": [check.to_json() for check in plan.checks],
        "bootstrap_checks": list(plan.bootstrap_checks),
        "dependency_files_count": len(plan.dependency_files),
        "dependency_files_truncated": plan.dependency_files_truncated,
        "notes": list(plan.notes),
        "interpreter": interpreter.to_json(),
    }


def render_checks_text(report: dict[str, Any]) -> str:
    """Plain text for a terminal: one block per check, then interpreter and inventory lines."""
    config = report["config"]
    lines = [f"Checks for {report['root']}"]
    lines.append(f"  source: {config}" if config is not None else "  source: discovered")
    checks: list[dict[str, Any]] = report["checks"]
    if not checks:
        lines.append("  no checks: code changes will stay unverified; configure one in .protoagent/project.json")
    bootstrap = set(report["bootstrap_checks"])
    for check in checks:
        marker = "  (bootstrap: a runner for tests still to be written)" if check["id"] in bootstrap else ""
        lines.append(f"  {check['id']}{marker}")
        lines.append(f"    command: {shlex.join(check['argv'])}")
        if check["cwd"] != ".":
            lines.append(f"    cwd: {check['cwd']}")
        if check["env"]:
            lines.append("    env: " + " ".join(f"{key}={value}" for key, value in check["env"].items()))
        lines.append(f"    why: {check['reason']} [{check['source']}]")
        if check.get("runner_unavailable"):
            lines.append(f"    unavailable: {check['runner_unavailable']}")
    interpreter = report["interpreter"]
    lines.append(f"  python: {interpreter['path']} ({interpreter['source']}: {interpreter['reason']})")
    truncated = " (truncated)" if report.get("dependency_files_truncated") else ""
    lines.append(f"  dependency files: {report['dependency_files_count']}{truncated}")
    lines.extend(f"  note: {note}" for note in report.get("notes", []))
    return "\n".join(lines)
