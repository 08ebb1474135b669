"""Process groups: signal a whole group and tell whether any live member is left.

Every command starts in its own session, so its process id is also its group id and every
descendant that does not call ``setsid`` itself stays in that group. A zombie counts as gone:
it runs no code and its parent (often the init process) reaps it.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

_PROC = Path("/proc")


def signal_group(pgid: int, signum: signal.Signals) -> bool:
    """Send ``signum`` to every member of group ``pgid``; false when the group is already gone."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    return True


def group_alive(pgid: int) -> bool:
    """Whether group ``pgid`` still has a member that is not a zombie."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not _PROC.is_dir():
        return True
    with os.scandir(_PROC) as entries:
        return any(_live_member(entry, pgid) for entry in entries if entry.name.isdigit())


def _live_member(entry: os.DirEntry[str], pgid: int) -> bool:
    fields = stat_fields(Path(entry.path) / "stat")
    if fields is None or len(fields) < 3:
        return False
    state, _ppid, pgrp = fields[0], fields[1], fields[2]
    return pgrp == str(pgid) and state not in ("Z", "X")


def stat_fields(path: Path) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state, ppid, pgrp ...)."""
    try:
        raw = path.read_bytes()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2 :].decode("ascii", errors="replace").split()
