"""The run's guard: surface permissions, read-only requests, write scope and plan freezing."""

from __future__ import annotations

import re

from protoagent.tools.pipeline import Guard, GuardInput
from protoagent.workflow.board import TaskBoard
from protoagent.workflow.contract import RunContract


def _beneath(path: str, scope: str) -> bool:
    path, scope = path.strip("/"), scope.strip("/")
    return scope in ("", ".") or path == scope or path.startswith(scope + "/")


def names_file(objective: str, path: str) -> bool:
    """The objective names ``path``: the path itself, or its file name as a word."""
    path = path.strip("/")
    name = path.rsplit("/", 1)[-1]
    return path in objective or re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", objective) is not None


def run_guard(board: TaskBoard, contract: RunContract) -> Guard:
    """Deny what the surface or the plan does not allow; freeze the plan when a write or a final
    check is proposed. It can only deny, never allow."""

    def guard(view: GuardInput) -> str | None:
        effect = view.prepared.effect
        record = board.record
        if effect == "write":
            if contract.read_only or record.read_only:
                return "you asked for no changes in this run, so file writes are denied"
            if contract.surface != "editing":
                return f"file writes are not part of a {contract.surface} request"
            outside = [p for p in view.prepared.paths if not any(_beneath(p, s) for s in record.allowed_paths or ("",))]
            if outside:
                return f"{outside} is outside the planned write scope {list(record.allowed_paths)}"
            if view.tool.name == "create_file" and view.ctx.profile == "small":
                unnamed = [p for p in view.prepared.paths if not names_file(record.objective, p)]
                if unnamed:
                    return f"the task names no file {unnamed[0]}: on the small profile, edit the existing files instead"
            board.freeze(f"{view.tool.name} proposed a write")
        if effect == "execute" and contract.surface in ("conversation", "question"):
            return f"commands are not part of a {contract.surface} request"
        if view.tool.name == "run_check" and getattr(view.args, "phase", None) == "verify":
            board.freeze("a final check was proposed")
        return None

    return guard
