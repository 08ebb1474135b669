"""Lines of a file as a read showed them: the span a worker's packet, the harness's localized
source and the objective's definitions are made of, and how several are shown in one message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from protoagent.json_form import json_form


@dataclass(frozen=True, slots=True)
class SpanBudget:
    """How much source one message carries: lines and characters of all its spans together."""

    lines: int
    chars: int


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """Lines of a file as a ``read_file`` result showed them, with the file's revision then."""

    path: str
    start_line: int
    end_line: int
    total_lines: int
    revision: str
    content: str
    cut: str = ""
    """When the span stops inside a construct (a function or class that goes on past
    ``end_line``), what it is and where it ends; else empty."""

    def render(self, next_shown: int | None = None, *, editing: bool = True) -> str:
        where = f"{self.path} lines {self.start_line}-{self.end_line} of {self.total_lines}"
        shown = self.content.rstrip("\n")
        return f"--- {where}; revision {self.revision}\n" + shown + self.continuation(next_shown, editing=editing)

    def continuation(self, next_shown: int | None = None, *, editing: bool = True) -> str:
        """The line that ends a span with more of its file after it: where it stops, which lines
        are not shown (up to ``next_shown``, the first line of the file's next span shown beside
        it), and (when it stops mid-construct) which construct and where that ends."""
        last = self.total_lines if next_shown is None else min(self.total_lines, next_shown - 1)
        if self.end_line >= last:
            return ""
        rest = f"lines {self.end_line + 1}-{last} are not shown"
        advice = ": read the rest before editing it" if editing else ""
        cut = f"; it stops inside {self.cut}{advice}" if self.cut else ""
        return f"\n[shown up to line {self.end_line}; {rest}{cut}]"

    def to_json(self) -> dict[str, Any]:
        return json_form(self, omit=("cut",))


def render_together(spans: Sequence[SourceSpan], *, editing: bool = True) -> str:
    """``spans`` shown in one message: a span's continuation counts only the lines up to the next
    span of its file shown there, so no shown line is called not shown; ``editing`` is whether
    the reader may edit them (a read-only reader is not told to read the rest before editing)."""

    def next_shown(span: SourceSpan) -> int | None:
        later = [s.start_line for s in spans if s.path == span.path and s.start_line > span.end_line]
        return min(later, default=None)

    return "\n".join(span.render(next_shown(span), editing=editing) for span in spans)


def span_from(data: dict[str, Any]) -> SourceSpan | None:
    """The span a read's record holds (a ``read_file`` result's data, a ``code_context`` source,
    a ``definition_read``), or ``None`` when it holds no content."""
    if not data.get("content") or not data.get("revision") or not data.get("path"):
        return None
    start, end = int(data.get("start_line", 1)), int(data.get("end_line", 0))
    total = int(data.get("total_lines", end))
    return SourceSpan(str(data["path"]), start, end, total, str(data["revision"]), str(data["content"]))


def fitted(span: SourceSpan, max_lines: int, max_chars: int) -> SourceSpan | None:
    """The span's first whole lines that fit both limits, or ``None`` when not one line fits."""
    kept: list[str] = []
    used = 0
    for line in span.content.splitlines(keepends=True)[:max_lines]:
        if used + len(line) > max_chars:
            break
        kept.append(line)
        used += len(line)
    if not kept:
        return None
    return replace(span, end_line=span.start_line + len(kept) - 1, content="".join(kept))


def line_count(span: SourceSpan) -> int:
    return span.end_line - span.start_line + 1
