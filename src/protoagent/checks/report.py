"""What ``protoagent checks`` shows: the captured plan, its source and the selected interpreter."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from protoagent.checks.config import load_project_config
from protoagent.checks.interpreter import select_interpreter
from protoagent.checks.plan import plan_checks


def checks_report(root: str | os.PathLike[str]) -> dict[str, Any]:
    """The workspace's check plan as a JSON-ready dict. Raises ``ProjectConfigError`` on a bad config."""
    workspace = Path(os.path.abspath(root))
    config = load_project_config(workspace)
    interpreter = select_interpreter(workspace)
    plan = plan_checks(workspace, interpreter, config=config)
    return {
        "root": str(workspace),
        "config": plan.config_path,
        "checks": [check.to_json() for check in plan.checks],
        "bootstrap_checks": list(plan.bootstrap_checks),
        "dependency_files": list(plan.dependency_files),
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
    if any(_runs_python(check["argv"], interpreter["path"]) for check in checks):
        lines.append(f"  python: {interpreter['path']} ({interpreter['source']}: {interpreter['reason']})")
    lines.append(_dependency_line(report))
    lines.extend(f"  note: {note}" for note in report.get("notes", []))
    return "\n".join(lines)


SHOWN_DEPENDENCY_FILES = 5


def _runs_python(argv: list[str], interpreter: str) -> bool:
    program = argv[0] if argv else ""
    return program == interpreter or os.path.basename(program).startswith(("python", "pypy"))


def _dependency_line(report: dict[str, Any]) -> str:
    """``dependency files: 7 (a.toml, b.lock, … and 2 more)``: the first few and a count."""
    files: list[str] = report.get("dependency_files", [])
    count = report["dependency_files_count"]
    truncated = ", list truncated" if report.get("dependency_files_truncated") else ""
    if not files:
        return f"  dependency files: {count}{truncated}"
    shown = ", ".join(files[:SHOWN_DEPENDENCY_FILES])
    more = f", … and {count - SHOWN_DEPENDENCY_FILES} more" if count > SHOWN_DEPENDENCY_FILES else ""
    return f"  dependency files: {count} ({shown}{more}{truncated})"
