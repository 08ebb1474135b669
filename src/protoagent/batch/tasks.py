"""A task suite: one JSON object a line, read into ``BatchTask`` values with paths resolved.

A line's relative ``repo`` and ``scripted:`` model paths are resolved against the suite file's
folder, so a suite and its fixtures move together. A bad line is refused with its line number
and the fix; nothing runs until the whole file reads.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from protoagent.batch.instances import SweBenchInstance
from protoagent.errors import ConfigError

Approval = Literal["ask", "auto-edit", "auto", "deny"]
SurfaceName = Literal["conversation", "question", "verification", "editing"]


class Expectation(BaseModel):
    """What must hold for a task to count as a success beyond its own report."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    status: Literal["completed", "incomplete", "failed"] | None = None
    applied: bool | None = None
    verified: bool | None = None
    criteria_supported: bool | None = None
    check: str | None = None
    """A check id whose last result must be ``passed``."""


class BatchTask(BaseModel):
    """One line of a task suite."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, max_length=200)
    objective: str = Field(min_length=1)
    repo: str
    """A local folder, or a git URL; with ``commit``, a clone at that commit is used (a local folder
    must then be a git repository)."""
    commit: str | None = None
    model: str = "local"
    approval: Approval = "auto"
    surface: SurfaceName | None = None
    mode: Literal["coding", "work"] = "coding"
    checks: list[dict[str, Any]] | None = None
    """Overrides the repository's checks (the ``checks`` list of ``.protoagent/project.json``)."""
    expect: Expectation | None = None
    max_model_calls: int | None = Field(default=None, ge=1, le=10_000)
    """The run's model-call budget; None takes the prompt profile's own."""
    swe_bench: SweBenchInstance | None = None
    """The SWE-bench instance the task was made from (``--format swe-bench``): its row then
    carries the session's patch against ``commit`` and, with ``--evaluate``, whether it resolved."""

    @field_validator("expect", mode="before")
    @classmethod
    def _check_id_shorthand(cls, value: object) -> object:
        return {"check": value} if isinstance(value, str) else value

    @property
    def is_remote(self) -> bool:
        return "://" in self.repo or self.repo.startswith("git@")


def load_tasks(path: Path) -> list[BatchTask]:
    """Read a suite; relative paths are taken from the suite's folder. Ids must be unique."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read task suite {str(path)!r}: {exc}; pass a JSON Lines file") from None
    base = path.resolve().parent
    tasks: list[BatchTask] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        task = _parse_line(path, number, line, base)
        if task.id in seen:
            raise ConfigError(f"{path}:{number}: task id {task.id!r} is used twice; give every task its own id")
        seen.add(task.id)
        tasks.append(task)
    if not tasks:
        raise ConfigError(f"task suite {str(path)!r} has no tasks; write one JSON object a line")
    return tasks


def _parse_line(path: Path, number: int, line: str, base: Path) -> BatchTask:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{number}: not JSON ({exc.msg}); write one JSON object a line") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:{number}: expected a JSON object with id, objective and repo")
    try:
        task = BatchTask.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        raise ConfigError(f"{path}:{number}: {where}: {first['msg']}") from None
    updates: dict[str, Any] = {}
    if not task.is_remote and not Path(task.repo).is_absolute():
        updates["repo"] = str((base / task.repo).resolve())
    if task.model.startswith("scripted:") and not Path(task.model[len("scripted:") :]).is_absolute():
        updates["model"] = "scripted:" + str((base / task.model[len("scripted:") :]).resolve())
    return task.model_copy(update=updates) if updates else task
