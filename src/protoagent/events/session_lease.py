"""One run at a time per session: a lease every run takes before it loads or appends its log.

Two runs appending to one log would race for the same sequence numbers, and the loser would die
mid-run without its ``tool.ended`` and ``run.ended``. So a run first claims its session; a second
claim, from any process, is refused with one line naming the holder. The SQLite store leases with
a lock file beside the store (``flock``: the kernel drops it when the holder dies, even by
SIGKILL); the PostgreSQL store with a session-level advisory lock on a connection of its own.
A store without the ``claim`` ability (the in-memory store) needs no lease: it has one process.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import os
from pathlib import Path
from typing import Any, Protocol

from protoagent.errors import ConfigError
from protoagent.private_files import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE

LOCKS_FOLDER = "locks"
"""Beside the SQLite store: one small lock file per session that has run."""


class SessionRunning(ConfigError):
    """Another run holds the session; the message says who and what to do."""

    def __init__(self, session_id: str, pid: int | None) -> None:
        holder = f"started by pid {pid}" if pid is not None else "started by another process"
        super().__init__(f"session {session_id} is running ({holder}); wait for it or stop it")
        self.session_id = session_id
        self.pid = pid


class SessionLease(Protocol):
    def release(self) -> None: ...


class NoLease:
    """The lease of a store that only one process can open."""

    def release(self) -> None:
        return


def claim_session(store: object, session_id: str) -> SessionLease:
    """Claim ``session_id`` in ``store`` for one run; raise ``SessionRunning`` if a run holds it."""
    claim = getattr(store, "claim", None)
    lease: SessionLease = claim(session_id) if callable(claim) else NoLease()
    return lease


def lease_key(session_id: str) -> str:
    """A file-name-safe key for a session id (ids given to ``--resume`` are user input)."""
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]


class FileLease:
    """An exclusive ``flock`` on ``<store folder>/locks/<store>.<key>.lock`` holding the owner's pid."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    @classmethod
    def acquire(cls, store_path: Path, session_id: str) -> FileLease:
        folder = store_path.parent / LOCKS_FOLDER
        folder.mkdir(mode=PRIVATE_DIR_MODE, exist_ok=True)
        path = folder / f"{store_path.name}.{lease_key(session_id)}.lock"
        flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(path, flags, PRIVATE_FILE_MODE)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            pid = _pid_in(fd)
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise SessionRunning(session_id, pid) from None
            raise ConfigError(f"{path}: cannot lock the session ({exc.strerror}); check the data home") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        return cls(fd, path)

    def release(self) -> None:
        """Give the session back; the file stays (removing it could let two runs lock two files)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass
        os.close(fd)  # closing the last descriptor drops the flock


def _pid_in(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", errors="replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


class AdvisoryLease:
    """A PostgreSQL session-level advisory lock held on a connection of its own for the run.

    The holder's pid is its connection's ``application_name``, so a refused claim can name it.
    """

    def __init__(self, conn: Any) -> None:
        self._conn: Any = conn

    @classmethod
    def acquire(cls, url: str, session_id: str) -> AdvisoryLease:
        import psycopg

        key = advisory_key(session_id)
        conn = psycopg.connect(url, autocommit=True, application_name=f"protoagent pid {os.getpid()}")
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()
            if row is None or not row[0]:
                raise SessionRunning(session_id, _advisory_holder(conn, key))
        except BaseException:
            conn.close()
            raise
        return cls(conn)

    def release(self) -> None:
        if self._conn is None:
            return
        conn, self._conn = self._conn, None
        conn.close()  # a closed connection's session-level locks are released by the server


def advisory_key(session_id: str) -> int:
    """A signed 64-bit advisory-lock key for a session id."""
    return int.from_bytes(
        hashlib.sha256(b"protoagent-session\0" + session_id.encode("utf-8")).digest()[:8], "big", signed=True
    )


def _advisory_holder(conn: Any, key: int) -> int | None:
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    row = conn.execute(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        "WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND l.objid = %s AND l.objsubid = 1",
        (unsigned >> 32, unsigned & 0xFFFFFFFF),
    ).fetchone()
    name = str(row[0]) if row is not None else ""
    pid = name.removeprefix("protoagent pid ")
    return int(pid) if pid.isdigit() else None
