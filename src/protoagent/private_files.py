"""The data home is private to its user: folders 0700, files 0600, existing ones tightened on open.

Session logs hold everything a run saw (file contents, command output), and settings name what
the person trusts; other users of the machine must not read either. Only what ProtoAgent owns is
tightened: a path owned by someone else, or a symbolic link, is left as it is.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Create folder ``path`` (0700) if missing, else take group and other access off it."""
    path.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
    tighten(path, PRIVATE_DIR_MODE)
    return path


def tighten(path: Path | str, mode: int = PRIVATE_FILE_MODE) -> None:
    """Take every permission bit outside ``mode`` off ``path`` when this user owns it; else nothing."""
    try:
        info = os.stat(path, follow_symlinks=False)
        current = stat.S_IMODE(info.st_mode)
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid() or not current & ~mode:
            return
        os.chmod(path, current & mode)
    except OSError:
        return  # a file that vanished or cannot be changed keeps what it has; nothing else depends on it


def create_private(path: Path | str) -> None:
    """Create ``path`` as an empty 0600 file unless it exists (then only tighten it)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    except FileExistsError:
        tighten(path)
        return
    os.close(fd)
