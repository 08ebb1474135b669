"""Revision capture of tracked files around a check run (``checks.tracked``)."""

from __future__ import annotations

import os
from pathlib import Path

from protoagent.checks.tracked import candidate_files, capture_tracked
from protoagent.testing import make_repo


def test_candidates_are_the_files_git_would_not_ignore_without_caches_or_environments(tmp_path: Path) -> None:
    root = make_repo(
        tmp_path / "repo",
        {
            ".gitignore": "build/\n*.log\n",
            "README.md": "# r\n",
            "src/app.py": "X = 1\n",
            "build/out.txt": "generated\n",
            "run.log": "noise\n",
            "src/__pycache__/app.cpython-311.pyc": "",
            ".venv/pyvenv.cfg": "home = /usr\n",
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/site.py": "",
            "Cargo.toml": "[package]\n",
            "target/debug/app": "",
            "node_modules/pkg/index.js": "",
        },
    )
    assert candidate_files(root) == [".gitignore", "Cargo.toml", "README.md", "src/app.py"]


def test_a_rewritten_or_removed_file_is_changed_and_a_touched_one_is_not(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {"README.md": "# r\n", "a.txt": "a\n", "b.txt": "b\n"}, git=False)
    snapshot = capture_tracked(root)
    (root / "README.md").write_text("# r\nbuilt\n")
    (root / "a.txt").unlink()
    os.utime(root / "b.txt", ns=(1, 1))  # same bytes, new mtime: not a change
    (root / "new.txt").write_text("created\n")  # not tracked before the run: not reported
    assert snapshot.changed_since() == ("README.md", "a.txt")


def test_capture_is_bounded_by_a_file_limit(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "repo", {f"f{i}.txt": str(i) for i in range(20)}, git=False)
    assert len(capture_tracked(root, limit=5).files) == 5
