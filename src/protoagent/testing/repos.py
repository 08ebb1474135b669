"""Helpers that build temporary repositories and model scripts for tests and demos."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any


def make_repo(root: Path, files: Mapping[str, str], *, git: bool = True) -> Path:
    """Write ``files`` (relative path → text) under ``root``; optionally commit them to a new git repo."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    if git:
        run = {"cwd": root, "check": True, "capture_output": True}
        subprocess.run(["git", "init", "-q"], **run)  # type: ignore[call-overload]
        subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
        subprocess.run(
            [
                "git",
                "-c",
                "user.name=ProtoAgent Tests",
                "-c",
                "user.email=tests@protoagent.invalid",
                "commit",
                "-q",
                "-m",
                "initial",
            ],
            **run,
        )  # type: ignore[call-overload]
    return root


def write_script(path: Path, turns: Iterable[Mapping[str, Any]]) -> Path:
    """Write a scripted-model JSON Lines file, one turn per line."""
    path.write_text("".join(json.dumps(dict(t)) + "\n" for t in turns), encoding="utf-8")
    return path


def tool_turn(name: str, role: str | None = None, say: str = "", **arguments: Any) -> dict[str, Any]:
    """One scripted turn that says ``say`` and calls one tool with ``arguments``."""
    turn: dict[str, Any] = {"text": say, "tool_calls": [{"name": name, "arguments": arguments}]}
    if role is not None:
        turn["role"] = role
    return turn


def final_turn(text: str, role: str | None = None) -> dict[str, Any]:
    """One scripted turn that answers without tool calls."""
    turn: dict[str, Any] = {"text": text}
    if role is not None:
        turn["role"] = role
    return turn
