"""What the safety tests share: the CLI as a subprocess, and the attacker's crafted git config."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXE = [sys.executable, "-m", "protoagent"]


def cli(home: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run the CLI with its own data home, no tty, and return what it did."""
    env = {**os.environ, "PROTOAGENT_HOME": str(home)}
    return subprocess.run(
        [*EXE, *args], env=env, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, check=False
    )


def hostile_git_config(marker: Path) -> str:
    """A git config whose every command-running key would create ``marker`` if git ran it."""
    touch = f"touch {marker}; false"
    return (
        "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n"
        f'\tfsmonitor = "{touch}"\n\tsshCommand = "{touch}"\n\tpager = "{touch}"\n\thooksPath = hooks\n'
        f'[diff]\n\texternal = "{touch}"\n[filter "evil"]\n\tclean = "{touch}"\n\tsmudge = "{touch}"\n'
        f'[credential]\n\thelper = "!{touch}"\n'
    )
