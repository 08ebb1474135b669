"""Replacing a file of ProtoAgent's own (settings, trust, caches, agent files, SKILL.md) whole.

Readers see the old file or the new one, never a part: the text goes to a temporary file beside
the target, which is then renamed over it. The new file is private (0600, as ``mkstemp`` creates
it) and a failed write leaves no temporary file behind. Writes inside a workspace go through
``workspace.files.write_atomic`` instead (relative to the workspace's folder descriptor).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def replace_file(path: Path, text: str, *, prefix: str | None = None, suffix: str = "", durable: bool = False) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically; ``durable`` flushes it to disk before the
    rename. The temporary file is named ``prefix`` (default ``.NAME.``), random letters, ``suffix``."""
    fd, tmp = tempfile.mkstemp(
        prefix=prefix if prefix is not None else f".{path.name}.", suffix=suffix, dir=path.parent
    )
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
