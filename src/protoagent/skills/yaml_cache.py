"""Frontmatter YAML parsed once per distinct text. The common shapes take the exact fast path
(``simple_yaml``); the rest go through ruamel.yaml, which is slow in pure Python, so its results
are memoised in-process and, when a run bootstraps, kept in a bounded cache file in the data home.
Read routes (``skills list``/``show``/``validate``, session loads) read that file, never write it.
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import YAMLError

from protoagent.atomic_files import replace_file
from protoagent.skills.simple_yaml import parse_simple

CACHE_FILE = "cache/skill-yaml.json"
CACHE_VERSION = 1
MAX_ENTRIES = 4096
_MEMO: dict[str, str] = {}
"""Parsed documents as JSON text, keyed by the hash of their YAML text (this process)."""


def parse_yaml(text: str) -> Any:
    """What ruamel.yaml's safe YAML 1.2 loader returns; raises ``YAMLError`` for invalid text."""
    simple = parse_simple(text)
    return simple if simple is not None else parse_yaml_fully(text)


class YamlTooDeep(YAMLError):
    """The document nests deeper than the parser can follow."""


def parse_yaml_fully(text: str) -> Any:
    """Parse with ruamel.yaml (safe, YAML 1.2), whatever the shape; ``YamlTooDeep`` for deep nesting."""
    try:
        return YAML(typ="safe", pure=True).load(io.StringIO(text))
    except RecursionError:
        raise YamlTooDeep("the YAML is nested too deeply; keep it to a few levels") from None


class YamlCache:
    """``load(text)`` returns what ``parse_yaml(text)`` returns, from the cache when it can."""

    def __init__(self, home: Path | None = None) -> None:
        self.path = home / CACHE_FILE if home is not None else None
        self._added = False
        if self.path is not None and not _MEMO:
            _MEMO.update(_read(self.path))

    def load(self, text: str) -> Any:
        simple = parse_simple(text)
        if simple is not None:
            return simple
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
        cached = _MEMO.get(key)
        if cached is not None:
            return json.loads(cached)
        value = parse_yaml_fully(text)
        try:
            encoded = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            return value  # dates and other non-JSON values are parsed every time
        if len(_MEMO) >= MAX_ENTRIES:
            _MEMO.clear()
        _MEMO[key] = encoded
        self._added = True
        return json.loads(encoded)

    def save(self) -> None:
        """Persist new entries (run bootstrap only); a cache that cannot be written is not kept."""
        if self.path is None or not self.path.parent.parent.is_dir():
            return  # never creates the data home just to hold a cache
        if not self._added and self.path.exists():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            replace_file(self.path, json.dumps({"version": CACHE_VERSION, "entries": _MEMO}), prefix=".skill-yaml.")
        except OSError:
            return
        self._added = False


def _read(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) and data.get("version") == CACHE_VERSION else None
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, str)}
