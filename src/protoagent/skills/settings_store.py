"""The skill settings overlay ``$PROTOAGENT_HOME/skill-settings.json``: runtime preferences per
exact variant identity. Bounded, locked across processes, atomically replaced, mode 0600.

A malformed or unsupported store is never overwritten: discovery falls back to bundle defaults
and every write refuses until the file is repaired or removed.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from protoagent.atomic_files import replace_file
from protoagent.errors import ConfigError
from protoagent.skills.model import MODES, AppMode, Diagnostic, Preferences

SETTINGS_FILE = "skill-settings.json"
STORE_VERSION = 1
"""Version 1: ``{"version": 1, "skills": {identity: {name, modes, implicit, manual}}}``."""
MAX_RECORDS = 2000
MAX_BYTES = 1 << 20
Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Overlay:
    """What the store holds: records by identity, diagnostics, and whether writes are refused."""

    records: Mapping[str, Record] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()
    malformed: bool = False


def settings_path(home: Path) -> Path:
    return home / SETTINGS_FILE


def load_overlay(home: Path | None) -> Overlay:
    """Read the store; a missing file is an empty overlay, a malformed one is flagged."""
    if home is None:
        return Overlay()
    path = settings_path(home)
    try:
        if path.stat().st_size > MAX_BYTES:
            return _malformed(path, f"is larger than {MAX_BYTES} bytes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Overlay()
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return _malformed(path, f"is not valid JSON ({exc.__class__.__name__})")
    if not isinstance(data, dict) or data.get("version") != STORE_VERSION or not isinstance(data.get("skills"), dict):
        return _malformed(path, f"is not a version {STORE_VERSION} skill settings store")
    skills: dict[str, Any] = data["skills"]
    if len(skills) > MAX_RECORDS:
        return _malformed(path, f"holds more than {MAX_RECORDS} records")
    records = {str(k): v for k, v in skills.items() if isinstance(v, dict)}
    bad = [
        Diagnostic(str(path), f"record {k!r} is not an object; bundle defaults apply")
        for k, v in skills.items()
        if not isinstance(v, dict)
    ]
    return Overlay(records, tuple(bad))


def _malformed(path: Path, why: str) -> Overlay:
    problem = (
        f"{path.name} {why}; bundle defaults apply and preference changes are refused until you "
        "back it up and repair or remove it"
    )
    return Overlay({}, (Diagnostic(str(path), problem, "error"),), malformed=True)


def apply_record(defaults: Preferences, record: Record | None, where: str) -> tuple[Preferences, list[Diagnostic]]:
    """The effective preferences: each valid field of the record over the bundle defaults."""
    if not record:
        return defaults, []
    problems: list[Diagnostic] = []
    modes = defaults.modes
    raw_modes = record.get("modes")
    if raw_modes is not None:
        if isinstance(raw_modes, list) and all(m in MODES for m in raw_modes):
            modes = frozenset(raw_modes)
        else:
            problems.append(Diagnostic(where, "skill setting 'modes' is invalid; bundle default modes apply"))
    flags = {}
    for key in ("implicit", "manual"):
        value = record.get(key)
        if value is not None and not isinstance(value, bool):
            problems.append(Diagnostic(where, f"skill setting {key!r} is not true/false; the bundle default applies"))
        elif value is not None:
            flags[key] = value
    implicit = flags.get("implicit", defaults.implicit)
    return Preferences(modes, implicit, flags.get("manual", defaults.manual)), problems


def update_record(home: Path, identity: str, change: Callable[[Record], Record | None]) -> None:
    """Change one record under a cross-process lock and replace the file atomically (mode 0600).
    ``change`` returns the new record, or ``None`` to remove it (reset)."""
    home.mkdir(parents=True, exist_ok=True)
    path = settings_path(home)
    with FileLock(str(path) + ".lock", timeout=10):
        overlay = load_overlay(home)
        if overlay.malformed:
            raise ConfigError(overlay.diagnostics[0].problem)
        records = {k: dict(v) for k, v in overlay.records.items()}
        new = change(dict(records.get(identity, {})))
        if new is None:
            records.pop(identity, None)
        else:
            records[identity] = new
        if len(records) > MAX_RECORDS:
            raise ConfigError(f"{path.name} would hold more than {MAX_RECORDS} records; reset unused skills first")
        _write(path, {"version": STORE_VERSION, "skills": records})


def _write(path: Path, data: dict[str, Any]) -> None:
    replace_file(path, json.dumps(data, indent=2, sort_keys=True) + "\n", prefix=".skill-settings.", durable=True)


def set_mode(home: Path, identity: str, name: str, current: Preferences, mode: AppMode, enabled: bool) -> None:
    """Make a variant available (or not) in ``mode``, starting from its effective modes."""

    def change(record: Record) -> Record:
        modes = set(current.modes)
        (modes.add if enabled else modes.discard)(mode)
        return {**record, "name": name, "modes": sorted(modes)}

    update_record(home, identity, change)


def set_flag(home: Path, identity: str, name: str, key: str, value: bool) -> None:
    """Turn ``implicit`` (catalog and resolver) or ``manual`` (``$name``) on or off."""
    set_flags(home, identity, name, {key: value})


def set_flags(home: Path, identity: str, name: str, flags: Mapping[str, bool]) -> None:
    """Set several of ``implicit`` and ``manual`` in one locked replace."""
    unknown = sorted(set(flags) - {"implicit", "manual"})
    if unknown:
        raise ConfigError(f"unknown skill preference {unknown[0]!r}; use implicit or manual")
    update_record(home, identity, lambda record: {**record, "name": name, **flags})


def reset(home: Path, identity: str) -> None:
    """Remove the variant's record so the bundle defaults apply again."""
    update_record(home, identity, lambda record: None)
