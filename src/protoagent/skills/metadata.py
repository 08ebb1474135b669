"""Bundle metadata beside SKILL.md: ``agents/protoagent.yaml`` (fallback ``agents/openai.yaml``)
supplies interface fields, policy and tool dependencies; ``.protoagent.json`` the portable modes."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ruamel.yaml.error import YAMLError

from protoagent.skills.model import MODES, SIDECAR_FILE, AppMode, Diagnostic, Preferences, SkillPolicy
from protoagent.skills.yaml_cache import parse_yaml
from protoagent.workspace.confined import read_confined

AGENT_FILES = ("agents/protoagent.yaml", "agents/openai.yaml")
"""Native metadata first; the portable third-party file is the fallback when it is absent."""
MAX_METADATA_BYTES = 1 << 20


def read_agent_metadata(
    directory: Path, load: Callable[[str], Any] = parse_yaml
) -> tuple[dict[str, Any], SkillPolicy, list[Diagnostic]]:
    """Interface fields, policy and diagnostics from the first agent metadata file present."""
    for relative in AGENT_FILES:
        path = directory / relative
        if os.path.lexists(path):
            return _parse_agent_file(directory, relative, load)
    return {}, SkillPolicy(), []


def _parse_agent_file(
    directory: Path, relative: str, load: Callable[[str], Any]
) -> tuple[dict[str, Any], SkillPolicy, list[Diagnostic]]:
    path = directory / relative
    try:
        data = load(read_confined(directory, relative, limit=MAX_METADATA_BYTES).decode("utf-8"))
    except (OSError, UnicodeDecodeError, YAMLError) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return {}, SkillPolicy(), [Diagnostic(str(path), f"policy file cannot be read: {first}; defaults apply")]
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return {}, SkillPolicy(), [Diagnostic(str(path), "policy file must be a YAML mapping; defaults apply")]
    problems: list[Diagnostic] = []
    interface = data.get("interface") or {}
    if not isinstance(interface, dict):
        problems.append(Diagnostic(str(path), "'interface' must be a mapping; ignored"))
        interface = {}
    implicit = True
    policy = data.get("policy") or {}
    if isinstance(policy, dict) and "allow_implicit_invocation" in policy:
        value = policy["allow_implicit_invocation"]
        if isinstance(value, bool):
            implicit = value
        else:
            problems.append(Diagnostic(str(path), "policy.allow_implicit_invocation must be true or false; using true"))
    elif not isinstance(policy, dict):
        problems.append(Diagnostic(str(path), "'policy' must be a mapping; defaults apply"))
    tools, tool_problems = _tool_dependencies(data.get("dependencies"), path)
    problems.extend(tool_problems)
    return dict(interface), SkillPolicy(implicit, tools), problems


def _tool_dependencies(raw: Any, path: Path) -> tuple[tuple[str, ...], list[Diagnostic]]:
    """``dependencies.tools``: names, or ``{type, value}`` entries; only built-in tools are supported."""
    if raw is None:
        return (), []
    entries = raw.get("tools") if isinstance(raw, dict) else None
    if entries is None:
        return (), []
    if not isinstance(entries, list):
        return (), [Diagnostic(str(path), "dependencies.tools must be a list; ignored")]
    names: list[str] = []
    problems: list[Diagnostic] = []
    for entry in entries:
        if isinstance(entry, str):
            names.append(entry)
        elif isinstance(entry, dict) and entry.get("type", "builtin") in ("builtin", "tool"):
            value = entry.get("value") or entry.get("name")
            if isinstance(value, str):
                names.append(value)
        else:
            kind = entry.get("type") if isinstance(entry, dict) else type(entry).__name__
            problems.append(Diagnostic(str(path), f"tool dependency of type {kind!r} is not supported; ignored"))
    return tuple(dict.fromkeys(names)), problems


def read_sidecar(directory: Path, fallback: frozenset[AppMode]) -> tuple[Preferences, list[Diagnostic]]:
    """Bundle default modes from ``.protoagent.json``; user/project skills default to both modes."""
    path = directory / SIDECAR_FILE
    if not os.path.lexists(path):
        return Preferences(modes=fallback), []
    try:
        data = json.loads(read_confined(directory, SIDECAR_FILE, limit=MAX_METADATA_BYTES).decode("utf-8"))
        modes = data.get("modes") if isinstance(data, dict) else None
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        modes = None
    if not isinstance(modes, list) or not modes or any(m not in MODES for m in modes):
        problem = f'{SIDECAR_FILE} must be {{"modes": ["work", "coding"]}} (a non-empty subset); defaults apply'
        return Preferences(modes=fallback), [Diagnostic(str(path), problem)]
    return Preferences(modes=frozenset(modes)), []
