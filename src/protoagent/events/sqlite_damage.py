"""Opening a SQLite session store that may be damaged, and listing what is still readable.

A store that is not a database, a zero-byte store (a truncated file, never silently recreated),
or a data home that is a file each end in one line naming the file and the fix. A store with a
bad page lists every session that still reads, and names the ones that do not.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

from protoagent.errors import ConfigError
from protoagent.private_files import PRIVATE_DIR_MODE, create_private, tighten

EMPTY_GRACE_S = 5.0
"""A zero-byte store younger than this may be another process's brand-new store, not a damaged one."""

Row = tuple[str, float, int, str, int]


def open_checked(path: Path) -> sqlite3.Connection:
    """Connect to the store at ``path``, creating it (0600, and its folder 0700) only when it does not exist."""
    folder = path.parent
    try:
        folder.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise ConfigError(
            f"{folder}: the data home is not a folder; point PROTOAGENT_HOME at a folder or move that file aside"
        ) from None
    except OSError as exc:
        raise ConfigError(f"{folder}: cannot create the data home ({exc.strerror}); check its permissions") from None
    _refuse_odd_file(path)
    try:
        # The log holds what the run saw: the store and its -wal/-shm files are the user's alone
        # (SQLite gives the -wal and -shm files the permissions of the store).
        create_private(path)
        for companion in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
            tighten(companion)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot create the session store ({exc.strerror}); check its folder") from None
    try:
        return sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise damaged_store(path, exc) from None


def _refuse_odd_file(path: Path) -> None:
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the session store ({exc.strerror}); check its permissions") from None
    if not stat.S_ISREG(info.st_mode):
        raise ConfigError(f"{path}: the session store is not a regular file; move it aside to start a new store")
    if info.st_size == 0 and time.time() - info.st_mtime > EMPTY_GRACE_S:
        raise ConfigError(
            f"{path}: the session store is empty (0 bytes), so it was truncated; restore it from a backup, "
            "or move it aside to start a new store"
        )


_WRITE_FAILURES = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN})


def is_write_failure(exc: sqlite3.Error) -> bool:
    """Whether SQLite failed to write (a full disk, a file size limit, an I/O error), not read bad data."""
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _WRITE_FAILURES


def store_write_failed(path: Path, exc: sqlite3.Error) -> ConfigError:
    """The one-line error for a store that cannot be written; what was stored before stays loadable."""
    return ConfigError(
        f"{path}: the session store cannot be written ({exc}); the disk may be full: free space there, "
        "then continue the session with --resume"
    )


def damaged_store(path: Path, exc: BaseException) -> ConfigError:
    """The one-line error for a store SQLite cannot use."""
    if isinstance(exc, sqlite3.Error) and is_write_failure(exc):
        return store_write_failed(path, exc)
    return ConfigError(
        f"{path}: the session store cannot be used ({exc}); move it aside (for example to "
        f"{path.name}.damaged) to start a new store, or restore it from a backup"
    )


def list_damaged(db: sqlite3.Connection, path: Path) -> tuple[list[Row], list[str]]:
    """The sessions of a damaged store that still read, and one warning per one that does not."""
    rows: list[Row] = []
    warnings: list[str] = []
    try:
        cursor = db.execute("SELECT session_id, created, format_version, title FROM sessions ORDER BY created")
        heads = cursor.fetchall()
    except sqlite3.DatabaseError as exc:
        return [], [f"{path}: the list of sessions is damaged ({exc}); restore the store from a backup"]
    for session_id, created, version, title in heads:
        try:
            count = db.execute(
                "SELECT COUNT(*), SUM(LENGTH(payload)) FROM events WHERE session_id = ?", (session_id,)
            ).fetchone()[0]
        except sqlite3.DatabaseError as exc:
            warnings.append(f"session {session_id!r} skipped: its events in {path} are damaged ({exc})")
            continue
        rows.append((session_id, created, version, title, int(count)))
    return rows, warnings
