"""Skill discovery speed and the Tier-1 catalog's size against its cap.

Method
------
1. Discovery: 200 bundles written to a temporary repository, 50 in each of the four project
   roots (``.agents/skills``, ``.claude/skills``, ``.protoagent/skills``, ``.opencode/skills``),
   each a realistic SKILL.md (name, a folded multi-line description, ``allowed-tools``, a
   ``metadata`` map, a 40-line body), every fourth with ``agents/openai.yaml`` and a
   ``references/`` file, plus the bundled skills and the settings overlay (``load_skills``).
   Wall time of a whole discovery in three states, median and worst of N runs:
   - cold: nothing parsed before (no in-process memo, no cache file): every frontmatter and
     agents/openai.yaml goes through ruamel.yaml (pure Python);
   - new process: the memo is empty but ``$PROTOAGENT_HOME/cache/skill-yaml.json`` holds the
     parses of the same texts (the state of every CLI call after the first);
   - warm: the same process discovers again (a session, the web server).
   Target: median < 100 ms.
2. Catalog: for context windows unknown, 8,192, 32,768 and 131,072 tokens, the rendered
   catalog of the 200 implicit skills for one request: its UTF-8 size, the cap (2 % of the
   window at 3.5 bytes per token, or 8,000 bytes unknown), and how many entries fit.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from protoagent.skills import yaml_cache
from protoagent.skills.catalog import build_catalog
from protoagent.skills.discovery import PROJECT_ROOTS, load_skills

BODY = "\n".join(f"{i}. Step {i}: do the specific thing and check the observable result." for i in range(40))


def write_bundles(repo: Path, per_root: int = 50) -> int:
    count = 0
    for root in PROJECT_ROOTS:
        for i in range(per_root):
            name = f"{root.split('/')[0].strip('.')}-skill-{i}"
            folder = repo / root / name
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(
                f"---\nname: {name}\ndescription: >-\n  Handle task family {i} for {root}: use when the\n"
                f"  request mentions topic {i} or its files. Not for unrelated work.\n"
                "allowed-tools: Read, Grep, Bash\nmetadata:\n  author: bench\n  version: '1.0'\n"
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


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo, home = Path(tmp) / "repo", Path(tmp) / "home"
        count = write_bundles(repo)
        load_skills([repo], None)  # imports
        cold = _timed(lambda: load_skills([repo], None), 5, clear=True)
        home.mkdir()
        load_skills([repo], home)  # writes the cache file
        fresh = _timed(lambda: load_skills([repo], home), 10, clear=True)
        warm = _timed(lambda: load_skills([repo], home), 20, clear=False)
        index = load_skills([repo], home)
        print(f"discovery of {count} bundles across 4 roots (+ bundled, {len(index.variants)} variants in all)")
        for label, times in (("cold (no cache)", cold), ("new process (cache file)", fresh), ("warm", warm)):
            print(
                f"  {label:<26} median {statistics.median(times):6.1f} ms, worst {max(times):6.1f} ms "
                f"over {len(times)} runs (target < 100 ms)"
            )
        implicit = index.implicit("coding")
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
