"""Skill discovery speed and the Tier-1 catalog's size against its cap.

Method
------
1. Discovery: 200 bundles written to a temporary repository, 50 in each of the four project
   roots (``.agents/skills``, ``.claude/skills``, ``.protoagent/skills``, ``.opencode/skills``),
   each a realistic SKILL.md (name, a folded multi-line description, ``allowed-tools``, a
   ``metadata`` map, a 40-line body), every fourth with ``agents/openai.yaml`` and a
   ``references/`` file, plus the bundled skills and the settings overlay (``load_skills``).
   Wall time of a whole discovery in three states, median and worst of N runs:
   - cold: nothing parsed before (no in-process memo, no cache file); the common shapes take
     the exact fast path (``skills/simple_yaml.py``), anything else goes through ruamel.yaml;
   - new process: the memo is empty but ``$PROTOAGENT_HOME/cache/skill-yaml.json`` holds the
     ruamel parses a run's bootstrap kept (read routes never write it);
   - warm: the same process discovers again (a session, the web server).
   The same three states are then measured for 200 bundles whose ``metadata`` nests a second
   level (``metadata: {vendor: {requires: …}}`` in block style), a shape the fast path leaves to
   ruamel.yaml (the worst case).
   Target: cold median < 100 ms for the realistic shapes.
2. Catalog: for context windows unknown, 8,192, 32,768 and 131,072 tokens, the rendered
   catalog of the 200 implicit skills for one request: its UTF-8 size, the cap (2 % of the
   window at 3.5 bytes per token, or 8,000 bytes unknown), and how many entries fit.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from protoagent.skills import yaml_cache
from protoagent.skills.catalog import build_catalog
from protoagent.skills.discovery import PROJECT_ROOTS, load_skills

BODY = "\n".join(f"{i}. Step {i}: do the specific thing and check the observable result." for i in range(40))


def write_bundles(repo: Path, per_root: int = 50, nested: bool = False) -> int:
    """Write ``per_root`` bundles in each project root; ``nested`` adds a second metadata level,
    which only ruamel.yaml parses."""
    count = 0
    extra = "  vendor:\n    requires: [git]\n" if nested else ""
    for root in PROJECT_ROOTS:
        for i in range(per_root):
            name = f"{root.split('/')[0].strip('.')}-skill-{i}"
            folder = repo / root / name
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: >-\n  Handle task family {i} for {root}: use when the\n"
                f"  request mentions topic {i} or its files. Not for unrelated work.\n"
                "allowed-tools: Read, Grep, Bash\nmetadata:\n  author: bench\n  version: '1.0'\n"
                f"{extra}"
                f"---\n# {name}\n\n{BODY}\n",
                encoding="utf-8",
            )
            if i % 4 == 0:
                (folder / "agents").mkdir()
                (folder / "agents/openai.yaml").write_text(
                    "interface:\n  display_name: X\npolicy:\n  allow_implicit_invocation: true\n"
                )
                (folder / "references").mkdir()
                (folder / "references/guide.md").write_text("guide\n")
            count += 1
    return count


def _timed(discover: Callable[[], object], runs: int, *, clear: bool) -> list[float]:
    times = []
    for _ in range(runs):
        if clear:
            yaml_cache._MEMO.clear()  # what a new process starts with
        start = time.perf_counter()
        discover()
        times.append((time.perf_counter() - start) * 1000)
    return times


def measure_discovery(tmp: Path, nested: bool) -> Path:
    """Print the three discovery states for one set of bundles; return the repository."""
    repo, home = tmp / f"repo-{nested}", tmp / f"home-{nested}"
    count = write_bundles(repo, nested=nested)
    load_skills([repo], None)  # imports
    cold = _timed(lambda: load_skills([repo], None), 5, clear=True)
    home.mkdir()
    load_skills([repo], home, persist_cache=True)  # what a run's bootstrap writes
    fresh = _timed(lambda: load_skills([repo], home), 10, clear=True)
    warm = _timed(lambda: load_skills([repo], home), 20, clear=False)
    shape = "two-level metadata (ruamel.yaml path)" if nested else "realistic frontmatter (fast path)"
    print(f"discovery of {count} bundles across 4 roots (+ bundled), {shape}")
    for label, times in (("cold (no cache)", cold), ("new process (cache file)", fresh), ("warm", warm)):
        print(
            f"  {label:<26} median {statistics.median(times):6.1f} ms, worst {max(times):6.1f} ms "
            f"over {len(times)} runs (target < 100 ms)"
        )
    return repo


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        repo = measure_discovery(Path(tmp), nested=False)
        measure_discovery(Path(tmp), nested=True)
        implicit = load_skills([repo], None).implicit("coding")
        print(f"catalog of {len(implicit)} implicit skills for one request")
        for window in (None, 8192, 32768, 131072):
            catalog = build_catalog(implicit, "handle topic 17 files", window, (repo,))
            label = "unknown" if window is None else f"{window:,}"
            print(
                f"  window {label:>8}: {catalog.size_bytes:>6,} bytes of cap {catalog.cap_bytes:>6,}; "
                f"{len(catalog.entries):>3} entries shown, {catalog.omitted:>3} omitted"
            )


if __name__ == "__main__":
    main()
