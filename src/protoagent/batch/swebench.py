"""``--format swe-bench``: instance files in, batch tasks out; a finished task's patch and score;
``preds.jsonl`` as the official harness reads it.

Each instance becomes a task on a hardened clone of ``REPOS/owner__name`` at ``base_commit``; its
objective is the problem statement (and the hints when asked). The agent never sees
``test_patch`` or the test ids: they travel with the task only to score its patch afterwards.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from protoagent.batch.evaluation import evaluate
from protoagent.batch.instances import SweBenchInstance
from protoagent.batch.patches import model_patch
from protoagent.batch.tasks import BatchTask
from protoagent.errors import ConfigError

PREDS_FILE = "preds.jsonl"


@dataclass(frozen=True, slots=True)
class InstanceOptions:
    """How instances become tasks: the same model and settings for every one."""

    repos: Path
    """The folder of local clones named ``owner__name``."""
    model: str
    hints: bool = False


def load_instances(path: Path, options: InstanceOptions) -> list[BatchTask]:
    """Read an instance file (JSON Lines); a bad line is refused naming the line and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read instance file {str(path)!r}: {exc}; pass a JSON Lines file") from None
    if not options.repos.is_dir():
        raise ConfigError(f"--repos {str(options.repos)!r} is not a folder; give the folder of owner__name clones")
    tasks: list[BatchTask] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        instance = _parse_line(path, number, line)
        if instance.instance_id in seen:
            raise ConfigError(f"{path}:{number}: instance_id {instance.instance_id!r} is used twice")
        seen.add(instance.instance_id)
        tasks.append(_task(path, number, instance, options))
    if not tasks:
        raise ConfigError(f"instance file {str(path)!r} has no instances; write one JSON object a line")
    return tasks


def _parse_line(path: Path, number: int, line: str) -> SweBenchInstance:
    try:
        data = json.loads(line)
    except (json.JSONDecodeError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise ConfigError(f"{path}:{number}: not JSON ({msg}); write one JSON object a line") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:{number}: expected a JSON object with instance_id, repo, base_commit …")
    try:
        return SweBenchInstance.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{path}:{number}: {where}: {message}") from None


def _task(path: Path, number: int, instance: SweBenchInstance, options: InstanceOptions) -> BatchTask:
    clone = options.repos / instance.clone_name
    if not (clone / ".git").exists():
        raise ConfigError(
            f"{path}:{number}: repo: no git clone at {str(clone)!r}; clone https://github.com/{instance.repo} there"
        )
    return BatchTask(
        id=instance.instance_id,
        objective=instance.objective(options.hints),
        repo=str(clone.resolve()),
        commit=instance.base_commit,
        model=options.model,
        approval="auto",
        surface="editing",
        swe_bench=instance,
    )


def instance_outcome(
    task: BatchTask, workspace: Path, config: bytes, scratch: Path, evaluating: bool, python: str | None, home: Path
) -> dict[str, Any]:
    """The row fields of a finished SWE-bench task: its patch and, when evaluating, its score."""
    instance = task.swe_bench
    assert instance is not None
    patch = model_patch(workspace, instance.base_commit, config)
    row: dict[str, Any] = {"instance_id": instance.instance_id, "model_patch": patch, "resolved": None}
    if evaluating:
        row.update(evaluate(instance, Path(task.repo), patch, scratch, python, home).to_row())
    return row


def write_preds(out: Path, rows: list[dict[str, Any]], model_name: str) -> Path:
    """``preds.jsonl``, one prediction a finished instance, written whole (then renamed into place)."""
    target = out / PREDS_FILE
    partial = out / f".{PREDS_FILE}.partial"
    lines = [
        json.dumps(
            {"instance_id": row["instance_id"], "model_name_or_path": model_name, "model_patch": row["model_patch"]}
        )
        + "\n"
        for row in rows
        if isinstance(row.get("model_patch"), str) and row.get("instance_id")
    ]
    with open(partial, "w", encoding="utf-8") as handle:
        handle.writelines(lines)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, target)
    return target
