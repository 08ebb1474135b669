"""``results.jsonl``: one line per finished task, appended as tasks finish; and its summary."""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS_FILE = "results.jsonl"


class ResultsFile:
    """Appends whole lines and syncs each one, so an interrupted batch keeps every finished task."""

    def __init__(self, out_dir: Path) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.path = out_dir / RESULTS_FILE

    def finished_ids(self) -> set[str]:
        """Ids already recorded (for ``--resume``). A torn last line is ignored."""
        return {str(row["id"]) for row in self.rows()}

    def rows(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        rows = []
        for line in self.path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and "id" in row:
                rows.append(row)
        return rows

    def append(self, row: dict[str, Any]) -> None:
        line = json.dumps(row, sort_keys=True) + "\n"
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())


@dataclass(frozen=True, slots=True)
class Summary:
    total: int
    by_status: dict[str, int]
    verified_rate: float
    expect_rate: float | None
    """Share of tasks with an ``expect`` whose expectation held; None when none had one."""
    p50_s: float
    p95_s: float
    tokens_in: int
    tokens_out: int
    model_calls: int
    tokens_cached: int = 0
    resolved: int | None = None
    """SWE-bench tasks whose patch resolved their instance; None when nothing was evaluated."""

    @property
    def resolved_rate(self) -> float | None:
        """Resolved tasks over all tasks (an errored or unscored one counts as unresolved)."""
        if self.resolved is None:
            return None
        return self.resolved / self.total if self.total else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "by_status": self.by_status,
            "verified_rate": self.verified_rate,
            "expect_rate": self.expect_rate,
            "p50_s": self.p50_s,
            "p95_s": self.p95_s,
            "tokens": {"input": self.tokens_in, "output": self.tokens_out, "cached_input": self.tokens_cached},
            "model_calls": self.model_calls,
            "resolved": self.resolved,
            "resolved_rate": self.resolved_rate,
        }

    def lines(self) -> list[str]:
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(self.by_status.items()))
        expect = "n/a" if self.expect_rate is None else f"{self.expect_rate:.0%}"
        resolved = [] if self.resolved_rate is None else [f"resolved    {self.resolved} ({self.resolved_rate:.0%})"]
        return [
            f"tasks       {self.total} ({statuses})",
            *resolved,
            f"verified    {self.verified_rate:.0%}",
            f"expect held {expect}",
            f"time        p50 {self.p50_s:.2f} s, p95 {self.p95_s:.2f} s",
            f"model calls {self.model_calls}",
            f"tokens      {self.tokens_in} in ({self.tokens_cached} cached), {self.tokens_out} out",
        ]


def summarize(rows: list[dict[str, Any]], *, evaluated: bool = False) -> Summary:
    """The summary of ``rows``; ``evaluated``: SWE-bench patches were scored, so count the resolved."""
    total = len(rows)
    times = sorted(float(r.get("wall_s", 0.0)) for r in rows)
    judged = [r["expect_held"] for r in rows if r.get("expect_held") is not None]
    tokens = [r.get("tokens") or {} for r in rows]
    return Summary(
        total=total,
        by_status=dict(Counter(str(r.get("status")) for r in rows)),
        verified_rate=(sum(1 for r in rows if r.get("verified")) / total) if total else 0.0,
        expect_rate=(sum(1 for held in judged if held) / len(judged)) if judged else None,
        p50_s=_percentile(times, 0.50),
        p95_s=_percentile(times, 0.95),
        tokens_in=sum(int(t.get("input", 0)) for t in tokens),
        tokens_out=sum(int(t.get("output", 0)) for t in tokens),
        model_calls=sum(int(r.get("model_calls", 0)) for r in rows),
        tokens_cached=sum(int(t.get("cached_input", 0)) for t in tokens),
        resolved=sum(1 for r in rows if r.get("resolved") is True) if evaluated else None,
    )


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    index = min(len(values) - 1, max(0, round(q * (len(values) - 1))))
    return values[index]
