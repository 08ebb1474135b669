"""Safety costs: the git-free file walk against `git ls-files`, and the artifact pump's throughput.

Method: a generated tree of 5,000 files in 250 folders with a nested .gitignore is listed by
``visible_files`` (the descriptor walk that applies ignore files itself) and by
``git ls-files --cached --others --exclude-standard`` with config-driven execution switched
off; best of 3 each. Then 256 MiB of output is piped through an artifact under the default
64 MiB cap and the wall time and the artifact size are printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from protoagent.processes.journal import OutputJournal, create_artifact
from protoagent.workspace.paths import DIR_FLAGS
from protoagent.workspace.search import visible_files


def _tree(root: Path) -> None:
    (root / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n")
    for folder in range(250):
        base = root / f"pkg{folder // 25}" / f"mod{folder}"
        base.mkdir(parents=True)
        if folder % 10 == 0:
            (base / ".gitignore").write_text("*.tmp\n")
        for index in range(20):
            suffix = (".py", ".log", ".tmp", ".txt")[index % 4]
            (base / f"f{index}{suffix}").write_text("x\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)


def _best(action: object, rounds: int = 3) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        best = min(best, time.perf_counter() - started)
    return best


def _walk(root: Path) -> int:
    fd = os.open(root, DIR_FLAGS)
    try:
        return sum(1 for _ in visible_files(fd))
    finally:
        os.close(fd)


def _git(root: Path) -> int:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(root),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    out = subprocess.run(
        [
            "git",
            "-c",
            "core.fsmonitor=false",
            "-c",
            f"core.hooksPath={os.devnull}",
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        check=True,
    ).stdout
    return len([name for name in out.split(b"\0") if name])


def _pump(folder: Path) -> tuple[float, int]:
    path, fd = create_artifact(folder, "big")
    started = time.perf_counter()
    try:
        subprocess.run(["head", "-c", str(256 << 20), "/dev/zero"], stdout=fd, check=True)
    finally:
        os.close(fd)
    OutputJournal(path).consume(8192, settled=True)
    return time.perf_counter() - started, path.stat().st_size


def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="bench-safety-"))
    try:
        root = scratch / "tree"
        root.mkdir()
        _tree(root)
        walked, listed = _walk(root), _git(root)
        print(f"files visible: walk {walked}, git {listed}")
        print(
            f"list 5,000 files: walk {_best(lambda: _walk(root)) * 1000:.1f} ms, "
            f"git ls-files {_best(lambda: _git(root)) * 1000:.1f} ms"
        )
        seconds, size = _pump(scratch / "artifacts")
        print(f"256 MiB through the artifact pump: {seconds:.2f} s ({256 / seconds:.0f} MiB/s), artifact {size} bytes")
    finally:
        shutil.rmtree(scratch)


if __name__ == "__main__":
    sys.exit(main())
