"""Shared set-up for application-layer tests: agent files, snapshots, the CLI, scripted runs."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protoagent.events import Event, MemoryStore
from protoagent.testing import ScriptedModel
from protoagent.workflow.run import RunOptions, RunReport, run_task

EXE = [sys.executable, "-m", "protoagent"]


def agent_file(root: Path, rel: str, frontmatter: str, body: str = "") -> Path:
    """Write ``root/rel`` as an agent Markdown file."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\n{frontmatter.strip()}\n---\n{body}", encoding="utf-8")
    return path


def snapshot(*roots: Path) -> dict[str, tuple[float, bytes]]:
    """Every file and folder under ``roots`` with its mtime and bytes."""
    out: dict[str, tuple[float, bytes]] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            data = path.read_bytes() if path.is_file() else b""
            out[str(path)] = (path.stat().st_mtime, data)
    return out


def cli(home: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    return subprocess.run(
        [*EXE, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        cwd=cwd,
    )


def call(name: str, role: str, **arguments: Any) -> dict[str, Any]:
    return {"role": role, "tool_calls": [{"name": name, "arguments": arguments}]}


def say(text: str, role: str) -> dict[str, Any]:
    return {"role": role, "text": text}


def scripted_run(
    objective: str,
    turns: Sequence[Mapping[str, Any]],
    *,
    repo: Path,
    home: Path,
    store: MemoryStore | None = None,
    **fields: Any,
) -> tuple[RunReport, list[Event], ScriptedModel, MemoryStore]:
    """One run with the scripted model standing in for the model; real files, real tools."""
    model = ScriptedModel.from_lines(turns)
    store = store or MemoryStore()
    options = RunOptions(
        repo=repo,
        model="scripted:inline",
        store=store,
        approval="auto",
        provider=model,
        artifacts_root=home / "artifacts",
        data_home=home,
        **fields,
    )
    report = asyncio.run(run_task(objective, options))
    return report, store.load(report.session_id), model, store
