"""The real-library bench's held-out tests: each passes on the released library, and the
bench judges a fix only after the run, leaving no holdout file behind. An edit that passes the
bug's own test but is not the released behaviour (the two the embedded model's repair has
accepted) fails its holdout."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "bench_guided_repair.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_guided_repair", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def test_validate_passes_each_holdout_on_the_released_library() -> None:
    argv = [sys.executable, str(BENCH), "--validate", "--bugs", "ordinalize_teens,last_both_branches"]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if "holdout on released" in line]
    assert len(lines) == 2 and all(" ok " in line and "holdout on released: passes" in line for line in lines)


def test_an_overfitting_edit_passes_the_bug_test_but_fails_its_holdout(tmp_path: Path) -> None:
    bench = _bench()
    bugs = {bug["name"]: bug for bug in bench.real_bugs([])}
    overfits = {
        "ordinalize_teens": ("boltons/strutils.py", "if numstr[-2] == '1':", "if numstr[-2] != '2':"),
        "last_both_branches": ("more_itertools/more.py", "hexversion != 0x030800F0", "hexversion == 0x030800F0"),
    }
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    for name, (path, old, new) in overfits.items():
        work = tmp_path / name
        bench.plant(bugs[name], work, planted=False)
        source = work / path
        text = source.read_text(encoding="utf-8")
        assert text.count(old) == 1
        source.write_text(text.replace(old, new), encoding="utf-8")
        assert subprocess.run(pytest, cwd=work, capture_output=True, check=False).returncode == 0, name
        before = sorted(p.name for p in work.iterdir())
        assert bench.judge(bugs[name], work) == (False, False), name
        assert sorted(p.name for p in work.iterdir()) == before, "the holdout file was left behind"
