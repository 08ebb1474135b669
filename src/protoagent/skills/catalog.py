"""Tier 1: the bounded, mode-filtered catalog of implicit skills (metadata only, never a body)."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from protoagent.skills.model import SkillBundle

CATALOG_SHARE = 0.02
"""The catalog may take 2 % of a known context window."""
UNKNOWN_WINDOW_BYTES = 8000
BYTES_PER_TOKEN = 3.5
"""Same conservative estimate the context estimator uses."""
RRF_K = 60
CATALOG_HEADER = (
    "Skills available (name: when to use it). To follow one, call the `skill` tool with its exact name; "
    "its instructions load then."
)
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    name: str
    description: str
    locator: str
    """Where SKILL.md lives (a path relative to its repository when there is one)."""

    def line(self) -> str:
        return f"- {self.name}: {self.description} [{self.locator}]"


@dataclass(frozen=True, slots=True)
class Catalog:
    """The rendered catalog and what did not fit."""

    entries: tuple[CatalogEntry, ...]
    omitted: int
    cap_bytes: int

    def render(self) -> str:
        if not self.entries:
            return ""
        lines = [CATALOG_HEADER, *(e.line() for e in self.entries)]
        if self.omitted:
            lines.append(f"({self.omitted} more skills did not fit; `$skill-name` names any skill exactly)")
        return "\n".join(lines)

    @property
    def size_bytes(self) -> int:
        return len(self.render().encode("utf-8"))


def catalog_cap(context_window: int | None) -> int:
    """UTF-8 bytes the catalog may take: 2 % of a known window, else 8,000."""
    if context_window is None or context_window <= 0:
        return UNKNOWN_WINDOW_BYTES
    return int(context_window * CATALOG_SHARE * BYTES_PER_TOKEN)


def locator(bundle: SkillBundle, repos: Sequence[Path] = ()) -> str:
    for repo in repos:
        try:
            return str(bundle.skill_file.relative_to(repo))
        except ValueError:
            continue
    return f"{bundle.source}:{bundle.directory.name}/SKILL.md"


def _tokens(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def rank(bundles: Sequence[SkillBundle], request: str) -> list[SkillBundle]:
    """Deterministic reciprocal-rank fusion of lexical overlap with the name and the description.
    Ranking orders the eligible catalog; it never filters it."""
    words = _tokens(request)
    if not words:
        return sorted(bundles, key=lambda b: b.name)

    def ranks(score_of: dict[str, float]) -> dict[str, int]:
        order = sorted(bundles, key=lambda b: (-score_of[b.identity], b.name))
        return {b.identity: i for i, b in enumerate(order)}

    name_score = {b.identity: float(len(words & _tokens(b.name))) for b in bundles}
    desc_score = {b.identity: _overlap(words, b.description) for b in bundles}
    by_name, by_desc = ranks(name_score), ranks(desc_score)
    fused = {
        b.identity: (1 / (RRF_K + by_name[b.identity]) if name_score[b.identity] else 0.0)
        + (1 / (RRF_K + by_desc[b.identity]) if desc_score[b.identity] else 0.0)
        for b in bundles
    }
    return sorted(bundles, key=lambda b: (-fused[b.identity], b.name))


def _overlap(words: set[str], text: str) -> float:
    found = _tokens(text)
    return len(words & found) / math.sqrt(len(found) or 1)


def build_catalog(
    bundles: Sequence[SkillBundle], request: str, context_window: int | None, repos: Sequence[Path] = ()
) -> Catalog:
    """The implicit skills that fit the cap, in name order when all fit, else best-ranked first."""
    cap = catalog_cap(context_window)
    entries = [CatalogEntry(b.name, b.description, locator(b, repos)) for b in sorted(bundles, key=lambda b: b.name)]
    if Catalog(tuple(entries), 0, cap).size_bytes <= cap:
        return Catalog(tuple(entries), 0, cap)
    by_name = {e.name: e for e in entries}
    chosen: list[CatalogEntry] = []
    for bundle in rank(bundles, request):
        trial = Catalog((*chosen, by_name[bundle.name]), len(entries) - len(chosen) - 1, cap)
        if trial.size_bytes <= cap:
            chosen.append(by_name[bundle.name])
    return Catalog(tuple(chosen), len(entries) - len(chosen), cap)
