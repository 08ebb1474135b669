"""``SymbolIndex``: the facts of a repository's source files, cached per project in the data home.

Files are the ones search visits (git's ignore rules applied, ``.git`` skipped, nothing run), read
beneath the root by descriptor. A file is parsed again only when its revision (content digest)
changes; unchanged size, mtime and inode skip even the read. A refresh stops at its time limit and
says how many files are left ("index incomplete"); the next refresh goes on from there.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from protoagent.errors import ToolRejected
from protoagent.navigation.facts import FACTS_VERSION, FileFacts, load_facts
from protoagent.navigation.listing import MAX_SOURCE_BYTES, list_sources, listing_holds, restamp
from protoagent.navigation.parsing import Parsed, Source, parse_sources
from protoagent.navigation.resolve import Resolver
from protoagent.private_files import create_private, private_dir
from protoagent.settings import data_home
from protoagent.workspace.files import MAX_FILE_BYTES, read_bytes, revision_of
from protoagent.workspace.paths import open_root

INDEX_TIME_LIMIT_S = 30.0
"""The longest one refresh parses files; the rest wait for the next refresh."""
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, revision TEXT, stamp TEXT, module TEXT, facts BLOB)",
    "CREATE TABLE IF NOT EXISTS names (name TEXT, path TEXT)",
    "CREATE INDEX IF NOT EXISTS names_by_name ON names (name)",
    "CREATE INDEX IF NOT EXISTS names_by_path ON names (path)",
    "CREATE TABLE IF NOT EXISTS defs (name TEXT, path TEXT, qualname TEXT, kind TEXT, line INT, end_line INT)",
    "CREATE INDEX IF NOT EXISTS defs_by_name ON defs (name)",
    "CREATE INDEX IF NOT EXISTS defs_by_path ON defs (path)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)",
    "CREATE TABLE IF NOT EXISTS folders (path TEXT PRIMARY KEY, stamp TEXT)",
)


MAX_CACHED_PROJECTS = 32
"""Project indexes kept in the data home; opening a new one removes the least recently used."""


def prune_caches(folder: Path, keep: int) -> None:
    """Remove all but the ``keep`` most recently used index files in ``folder`` (with their WAL
    files); a cache in use elsewhere is simply rebuilt by whoever opens it next."""
    caches = sorted(folder.glob("*.sqlite"), key=lambda p: p.stat().st_mtime if p.exists() else 0.0, reverse=True)
    for stale in caches[keep:]:
        for path in (stale, stale.with_name(stale.name + "-wal"), stale.with_name(stale.name + "-shm")):
            path.unlink(missing_ok=True)


def default_home() -> Path:
    """The data home, as every ProtoAgent command finds it: ``$PROTOAGENT_HOME`` or ``~/.protoagent``."""
    return data_home()


def cache_file(home: Path, root: Path) -> Path:
    """Where the index of ``root`` is kept: one SQLite file per project under the data home."""
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", root.name)[:40] or "root"
    return home / "navigation" / f"{name}-{digest}.sqlite"


def module_names(paths: Iterable[str]) -> dict[str, str]:
    """Path -> dotted module name: the folders above a file that hold ``__init__.py`` make its
    package (``src/pkg/mod.py`` is ``pkg.mod``); a JavaScript file is named by its path."""
    paths = list(paths)
    packages = {posixpath.dirname(p) for p in paths if p.endswith("/__init__.py") or p == "__init__.py"}
    names: dict[str, str] = {}
    for path in paths:
        stem, _, _ = path.rpartition(".")
        if not path.endswith(".py"):
            names[path] = stem.replace("/", ".")
            continue
        folder, _, base = stem.rpartition("/")
        parts = [] if base == "__init__" else [base]
        while folder and folder in packages:
            folder, _, name = folder.rpartition("/")
            parts.insert(0, name)
        names[path] = ".".join(parts) or base
    return names


@dataclass(frozen=True, slots=True)
class RefreshReport:
    files: int
    parsed: int
    left: int
    """Changed files the time limit left unparsed (their old facts, if any, stay)."""
    unparsable: int
    seconds: float


class SymbolIndex:
    """The symbol facts of one repository root. Thread-safe: tools call it from worker threads."""

    def __init__(self, root: Path, cache: Path | None) -> None:
        self.root = root
        self.cache = cache
        self.notes: list[str] = []
        self.lock = threading.RLock()
        """Held by a refresh and by one answer, so an answer reads one state of the index."""
        self._db = self._open(cache)
        self._facts: dict[str, FileFacts | None] = {}
        self._modules: dict[str, str] = {}
        self._paths: dict[str, str] = {}
        self.last: RefreshReport | None = None
        self.resolver = Resolver(self.facts, self.path_of_module)

    def _open(self, cache: Path | None) -> sqlite3.Connection:
        db: sqlite3.Connection | None = None
        if cache is not None:
            try:
                private_dir(cache.parent)  # symbol names and source structure are the user's alone
                if not cache.exists():
                    prune_caches(cache.parent, MAX_CACHED_PROJECTS - 1)
                create_private(cache)
                os.utime(cache)  # used now: pruning goes by last use
                db = sqlite3.connect(cache, check_same_thread=False, timeout=30)
                db.execute("PRAGMA journal_mode=WAL")
                for statement in _SCHEMA:
                    db.execute(statement)
                if self._meta(db, "version") != str(FACTS_VERSION):
                    db.executescript("DELETE FROM files; DELETE FROM names; DELETE FROM defs; DELETE FROM folders;")
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (str(FACTS_VERSION),))
                db.commit()
            except (OSError, sqlite3.Error) as err:
                self.notes.append(f"index cache unavailable ({err}); this index lives in memory only")
                db = None
        if db is None:
            db = sqlite3.connect(":memory:", check_same_thread=False)
            for statement in _SCHEMA:
                db.execute(statement)
        return db

    @staticmethod
    def _meta(db: sqlite3.Connection, key: str) -> str | None:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def close(self) -> None:
        with self.lock:
            self._db.close()

    # Refresh

    def refresh(self, time_limit_s: float = INDEX_TIME_LIMIT_S) -> RefreshReport:
        """Bring the index up to date with the files, parsing at most ``time_limit_s`` seconds."""
        with self.lock:
            started = time.monotonic()
            deadline = started + time_limit_s
            known = {
                row[0]: (row[1], row[2], row[3])
                for row in self._db.execute("SELECT path, revision, stamp, module FROM files")
            }
            try:
                with open_root(self.root) as root_fd:
                    report = self._sync(root_fd, known, deadline)
            except OSError as err:
                raise ToolRejected(
                    f"cannot index {str(self.root)!r}: {err.strerror or err}", kind="index_failed"
                ) from None
            self.last = RefreshReport(*report, seconds=time.monotonic() - started)
            return self.last

    def _sync(self, root_fd: int, known: dict[str, tuple[str, str, str]], deadline: float) -> tuple[int, int, int, int]:
        stamps = self._listing(root_fd, known)
        if stamps.keys() == known.keys():  # the same files: the module names they were stored with hold
            modules = {path: known[path][2] for path in stamps}
        else:
            modules = module_names(stamps)
        gone = [p for p in known if p not in stamps]
        sources: list[Source] = []
        for path, stamp in stamps.items():
            old = known.get(path)
            if old is not None and old[1] == stamp and old[2] == modules[path]:
                continue
            source = _read(root_fd, path, modules[path])
            if source is None:
                gone.append(path)
            elif old is not None and old[0] == source.revision and old[2] == source.module:
                self._db.execute("UPDATE files SET stamp = ? WHERE path = ?", (stamp, path))
            else:
                sources.append(source)
        parsed = 0
        for result in parse_sources(sources, deadline):
            self._store(result, stamps[result.path])
            parsed += 1
        for path in gone:
            self._forget(path)
        left = len(sources) - parsed
        if left:  # files the listing holds are not all indexed: the next refresh walks again
            self._db.execute("DELETE FROM folders")
        self._db.commit()
        if parsed or gone:
            self._facts.clear()
            self.resolver = Resolver(self.facts, self.path_of_module)
        self._modules = unambiguous_modules(modules)
        self._paths = modules
        unparsable = self._db.execute("SELECT COUNT(*) FROM meta WHERE key LIKE 'error:%'").fetchone()[0]
        return len(stamps), parsed, left, int(unparsable)

    def _listing(self, root_fd: int, known: dict[str, tuple[str, str, str]]) -> dict[str, str]:
        """The source files and their stamps: the known ones restamped while the listing holds,
        else a new walk (whose folder stamps are kept for the next refresh)."""
        folders = {str(r[0]): str(r[1]) for r in self._db.execute("SELECT path, stamp FROM folders")}
        if known and listing_holds(root_fd, folders):
            return restamp(root_fd, sorted(known))
        listing = list_sources(root_fd)
        self._db.execute("DELETE FROM folders")
        self._db.executemany("INSERT INTO folders VALUES (?, ?)", listing.folders.items())
        return listing.files

    def _store(self, parsed: Parsed, stamp: str) -> None:
        """Replace whatever is stored for the file (another process may have stored it meanwhile)."""
        path = parsed.path
        self._forget(path)
        self._db.execute(
            "INSERT INTO files VALUES (?, ?, ?, ?, ?)", (path, parsed.revision, stamp, parsed.module, parsed.blob)
        )
        self._db.executemany("INSERT INTO names VALUES (?, ?)", ((name, path) for name in parsed.keys))
        rows = [(name, path, qualname, kind, line, end) for name, qualname, kind, line, end in parsed.definitions]
        rows.append((parsed.module.rpartition(".")[2], path, "", "module", 1, 1))
        self._db.executemany("INSERT INTO defs VALUES (?, ?, ?, ?, ?, ?)", rows)
        if parsed.error:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"error:{path}", parsed.error))

    def _forget(self, path: str) -> None:
        for table in ("files", "names", "defs"):
            self._db.execute(f"DELETE FROM {table} WHERE path = ?", (path,))
        self._db.execute("DELETE FROM meta WHERE key = ?", (f"error:{path}",))

    # Lookups

    def facts(self, path: str) -> FileFacts | None:
        with self.lock:
            if path not in self._facts:
                row = self._db.execute("SELECT facts FROM files WHERE path = ?", (path,)).fetchone()
                self._facts[path] = load_facts(row[0]) if row else None
            return self._facts[path]

    def path_of_module(self, module: str) -> str | None:
        return self._modules.get(module)

    def module_of(self, path: str) -> str:
        return self._paths.get(path, "")

    def definitions_named(self, name: str) -> list[tuple[str, str, str, int, int]]:
        """``(path, qualname, kind, line, end_line)`` of every definition whose own name is ``name``."""
        with self.lock:
            rows = self._db.execute(
                "SELECT path, qualname, kind, line, end_line FROM defs WHERE name = ? ORDER BY path, line", (name,)
            ).fetchall()
        return [(str(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4])) for r in rows]

    def files_using(self, name: str) -> list[str]:
        with self.lock:
            rows = self._db.execute("SELECT DISTINCT path FROM names WHERE name = ? ORDER BY path", (name,)).fetchall()
        return [str(r[0]) for r in rows]

    def all_names(self) -> list[str]:
        with self.lock:
            return [str(r[0]) for r in self._db.execute("SELECT DISTINCT name FROM defs")]

    def unparsable(self) -> list[tuple[str, str]]:
        with self.lock:
            rows = self._db.execute("SELECT key, value FROM meta WHERE key LIKE 'error:%' ORDER BY key").fetchall()
        return [(str(k).removeprefix("error:"), str(v)) for k, v in rows]


def unambiguous_modules(modules: dict[str, str]) -> dict[str, str]:
    """Module name -> path; of several files with one name the shallowest wins, and a tie names none."""
    best: dict[str, tuple[int, str | None]] = {}
    for path, module in modules.items():
        depth = path.count("/")
        held = best.get(module)
        if held is None or depth < held[0]:
            best[module] = (depth, path)
        elif depth == held[0]:
            best[module] = (depth, None)
    return {module: path for module, (_, path) in best.items() if path is not None}


def _read(root_fd: int, path: str, module: str) -> Source | None:
    """A source file's bytes read beneath the root, or ``None`` when it cannot be read."""
    try:
        data = read_bytes(root_fd, path, limit=min(MAX_FILE_BYTES, MAX_SOURCE_BYTES))
    except (OSError, ToolRejected):
        return None
    return Source(path, revision_of(data), module, data)
