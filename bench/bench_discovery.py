"""Benchmark: check discovery on a 20,000-file repository, and whether it grows with file contents.

Method
------
1. Generate a repository of exactly 20,000 files in a temporary directory:
   ~19,800 files outside the test directories (``src/`` packages of small modules, ``docs/``,
   ``data/`` with a few multi-megabyte files, a ``package.json`` and ``pyproject.toml``) and a
   realistic ``tests/`` directory of ~200 files (``__init__.py``, ``conftest.py``, helpers, test
   modules of ~8 KiB, two ~1 MiB generated test tables, non-Python fixture data).
2. Build two variants of the suite: *pytest-style* (test functions; discovery stops reading at
   the first pytest marker) and *unittest-style* (``unittest.TestCase`` classes only; the worst
   case, because every test module must be read to rule pytest out). The unittest variant has
   no conftest and no pytest configuration.
3. For each variant call ``discover_checks(root, python=sys.executable)`` once to warm the OS
   cache, then ``--runs`` more times, and report the median and the maximum wall time
   (``time.perf_counter``). The target is a median under 0.5 s.
4. Rewrite every file under ``tests/`` ten times larger (same names, same markers, more body)
   and measure again; print the ratio large/normal. Reads are bounded (64 KiB per file, 4 MiB
   per suite, stop at the first pytest marker), so the ratio stays bounded whatever the
   contents; only the walk over names (unchanged) and the bounded reads remain.

Run:  python bench/bench_discovery.py [--runs 7] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from protoagent.checks import CheckPlan, discover_checks

TOTAL_FILES = 20_000
TEST_MODULES = 170
OUTSIDE_LARGE_FILES = 4
LARGE_BYTES = 4 * 1024 * 1024


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _test_module(index: int, style: str, scale: int) -> str:
    header = "import pytest\n\nfrom .helpers import build\n\n\n" if style == "pytest" else "import unittest\n\n\n"
    if style == "pytest":
        body = "".join(
            f"def test_case_{index}_{case}():\n    assert build({case}) == {case}\n\n\n" for case in range(120 * scale)
        )
    else:
        method = "    def test_case_{0}(self):\n        self.assertEqual({0}, {0})\n\n"
        methods = "".join(method.format(case) for case in range(110 * scale))
        body = f"class Module{index}Test(unittest.TestCase):\n{methods}"
    return header + body


def write_tests(root: Path, style: str, scale: int) -> int:
    """(Re)write ``tests/`` for one style and size; returns how many files it holds."""
    shutil.rmtree(root / "tests", ignore_errors=True)
    helpers = "def build(x):\n    return x\n" * scale
    files: dict[str, str | bytes] = {"tests/__init__.py": "", "tests/helpers.py": helpers}
    if style == "pytest":
        files["tests/conftest.py"] = "import pytest\n\n\n@pytest.fixture\ndef value():\n    return 1\n" * scale
    for index in range(TEST_MODULES):
        group = f"group_{index % 5}"
        files[f"tests/{group}/__init__.py"] = ""
        files[f"tests/{group}/test_module_{index:03}.py"] = _test_module(index, style, scale)
    table = "CASES = [\n" + "    (1, 2, 3),\n" * (70_000 * scale) + "]\n"
    files["tests/test_table_a.py"] = _test_module(900, style, 1) + table
    files["tests/test_table_b.py"] = _test_module(901, style, 1) + table
    for index in range(200 - len(files)):
        files[f"tests/data/sample_{index:03}.json"] = json.dumps({"value": index}) * scale
    for relative, text in files.items():
        _write(root / relative, text)
    return len(files)


def generate(root: Path, style: str) -> int:
    """Write the repository; returns the total number of files."""
    tests = write_tests(root, style, scale=1)
    _write(root / "pyproject.toml", '[project]\nname = "bench"\n')
    _write(root / "package.json", json.dumps({"name": "bench", "scripts": {"lint": "eslint ."}}))
    for index in range(OUTSIDE_LARGE_FILES):
        _write(root / f"data/blob_{index}.bin", os.urandom(LARGE_BYTES))
    remaining = TOTAL_FILES - tests - 2 - OUTSIDE_LARGE_FILES
    docs = 2_000
    for index in range(docs):
        _write(root / f"docs/section_{index // 100:02}/page_{index:04}.md", f"# Page {index}\n")
    for index in range(remaining - docs):
        package = root / "src" / "bench" / f"pkg_{index // 150:03}"
        _write(package / f"module_{index:05}.py", f"def function_{index}():\n    return {index}\n")
    return sum(len(names) for _, _, names in os.walk(root))


def measure(root: Path, runs: int) -> tuple[float, float, CheckPlan]:
    """Median and maximum seconds of ``discover_checks`` after one warm-up call."""
    plan = discover_checks(root, python=sys.executable)
    times: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        plan = discover_checks(root, python=sys.executable)
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times), plan


def bench_style(base: Path, style: str, runs: int) -> None:
    root = base / style
    total = generate(root, style)
    median, worst, plan = measure(root, runs)
    write_tests(root, style, scale=10)
    big_median, big_worst, _ = measure(root, runs)
    tests_bytes = sum(path.stat().st_size for path in (root / "tests").rglob("*") if path.is_file())
    print(f"[{style}-style suite] {total} files; checks {', '.join(plan.check_ids)}")
    print(f"  dependency files: {len(plan.dependency_files)}; reason: {plan.checks[0].reason}")
    print(f"  normal tests/:  median {median * 1000:7.1f} ms   max {worst * 1000:7.1f} ms")
    big = f"median {big_median * 1000:7.1f} ms   max {big_worst * 1000:7.1f} ms"
    print(f"  10x tests/ ({tests_bytes / 1e6:.0f} MB): {big}")
    verdict = "met" if median < 0.5 and big_median < 0.5 else "MISSED"
    print(f"  ratio 10x/normal: {big_median / median:.2f}   target median < 500 ms: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the generated repositories")
    options = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-discovery-"))
    try:
        for style in ("pytest", "unittest"):
            bench_style(base, style, options.runs)
    finally:
        if options.keep:
            print(f"kept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
