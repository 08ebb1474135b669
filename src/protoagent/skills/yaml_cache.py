"""Frontmatter YAML parsed once per distinct text: an in-process memo and a bounded cache file in
the data home. The YAML library is slow in pure Python; the same text always parses the same way,
so discovery of an unchanged catalog costs file reads and hashes, not parsing."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

CACHE_FILE = "cache/skill-yaml.json"
CACHE_VERSION = 1
MAX_ENTRIES = 4096
_MEMO: dict[str, str] = {}
"""Parsed documents as JSON text, keyed by the hash of their YAML text (this process)."""


def parse_yaml(text: str) -> Any:
    """Parse with ruamel.yaml (safe, YAML 1.2). Raises ``YAMLError`` for invalid text."""
    return YAML(typ="safe", pure=True).load(io.StringIO(text))


class YamlCache:
    """``load(text)`` returns what ``parse_yaml(text)`` returns, from the cache when it can."""

    def __init__(self, home: Path | None = None) -> None:
        self.path = home / CACHE_FILE if home is not None else None
        self._added = False
        if self.path is not None and not _MEMO:
            _MEMO.update(_read(self.path))

    def load(self, text: str) -> Any:
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
        cached = _MEMO.get(key)
        if cached is not None:
            return json.loads(cached)
        value = parse_yaml(text)
        try:
            encoded = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError):
            return value  # dates and other non-JSON values are parsed every time
        if len(_MEMO) >= MAX_ENTRIES:
            _MEMO.clear()
        _MEMO[key] = encoded
        self._added = True
        return json.loads(encoded)

    def save(self) -> None:
        """Persist new entries; a cache that cannot be written is simply not kept."""
        if self.path is None or not self.path.parent.parent.is_dir():
            return  # never creates the data home just to hold a cache
        if not self._added and self.path.exists():
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".skill-yaml.", dir=self.path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({"version": CACHE_VERSION, "entries": _MEMO}, handle)
            os.replace(tmp, self.path)
        except OSError:
            return
        self._added = False


def _read(path: Path) -> dict[str, str]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}
    entries = data.get("entries") if isinstance(data, dict) and data.get("version") == CACHE_VERSION else None
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, str)}
