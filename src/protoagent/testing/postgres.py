"""A throwaway PostgreSQL server for tests and benchmarks: ``initdb`` into a temporary folder,
started on a free loopback port, stopped and removed on exit.

PostgreSQL refuses to run as root; when this process is root the server runs as the
``postgres`` system account (Debian's package creates it) through ``runuser``.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_USER = "protoagent"


def postgres_bin_dir() -> Path | None:
    """The folder holding ``initdb`` and ``pg_ctl``, or None when PostgreSQL is not installed."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    return Path(candidates[0]).parent if candidates else None


def missing_reason() -> str | None:
    """Why no throwaway server can start here, or None when one can."""
    if postgres_bin_dir() is None:
        return "PostgreSQL server binaries (initdb, pg_ctl) are not installed: apt-get install postgresql"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' account to run the server as"
        if shutil.which("runuser") is None:
            return "running as root and 'runuser' is missing"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def temporary_postgres() -> Iterator[str]:
    """Start a server and yield its ``postgresql://`` URL (database ``protoagent``, trust auth)."""
    reason = missing_reason()
    if reason is not None:
        raise RuntimeError(reason)
    bindir = postgres_bin_dir()
    assert bindir is not None
    base = Path(tempfile.mkdtemp(prefix="protoagent-pg-"))
    data = base / "data"
    prefix: list[str] = []
    if os.geteuid() == 0:
        account = pwd.getpwnam("postgres")
        os.chmod(base, 0o755)
        data.mkdir()
        os.chown(data, account.pw_uid, account.pw_gid)
        prefix = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    quiet = {"check": True, "capture_output": True}
    try:
        subprocess.run(
            [*prefix, str(bindir / "initdb"), "-D", str(data), "-U", _USER, "--auth=trust", "-E", "UTF8"],
            **quiet,  # type: ignore[call-overload]
        )
        options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(
            [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(data / "log"), "start"],
            **quiet,  # type: ignore[call-overload]
        )
        try:
            subprocess.run(
                [*prefix, str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", _USER, "protoagent"],
                **quiet,  # type: ignore[call-overload]
            )
            yield f"postgresql://{_USER}@127.0.0.1:{port}/protoagent"
        finally:
            subprocess.run(
                [*prefix, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                capture_output=True,
                check=False,
            )
    finally:
        shutil.rmtree(base, ignore_errors=True)
