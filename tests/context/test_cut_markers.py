"""Every cut marker states the true number of characters left out of the original output.

A ~62 KB baseline output was once shown with ``[... 40 characters of output cut ...]``: the
receipt was excerpted twice and the second pass counted only the first pass's marker.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.workflow.support import BUGGY, run_workflow, say

from protoagent.excerpts import excerpt, original_length, tail_excerpt
from protoagent.processes.journal import bounded_view

NOISY_TEST = """import unittest

from dates import parse_date


class ParseDateTest(unittest.TestCase):
    def test_parses_year_month_day(self):
        for n in range(600):
            print(f"line {n:04d} " + "x" * 90)
        self.assertEqual(parse_date("2024-03-15"), (2024, 3, 15))
"""
MARKER = re.compile(r"\[\.\.\. (\d+) characters of output cut \.\.\.\]\n")


def test_a_long_baseline_shown_to_the_architect_states_the_whole_cut(tmp_path: Path) -> None:
    files = {"dates.py": BUGGY, "test_dates.py": NOISY_TEST}
    turns = [say("The baseline fails in parse_date.", "architect")]
    run = run_workflow(tmp_path, "fix the failing date parser test", turns, files=files)
    baseline = run.ended("run_check")[0].payload
    full = Path(baseline["artifact"]).read_text(encoding="utf-8")
    assert len(full) > 55_000
    first = run.requests("architect")[0]
    shown = next(m.content for m in first.messages if "Baseline before any change" in m.content)
    markers = list(MARKER.finditer(shown))
    assert len(markers) == 1
    kept = shown[markers[0].end() :].split("\n\n", 1)[0]
    assert full.rstrip("\n").endswith(kept)
    assert int(markers[0][1]) == len(full.rstrip("\n")) - len(kept)


PASSES = st.lists(
    st.tuples(st.sampled_from(["tail", "middle"]), st.integers(min_value=1, max_value=120)), min_size=1, max_size=6
)


@settings(max_examples=300, deadline=None)
@given(original=st.text(alphabet="ab \n.…]", max_size=400), passes=PASSES)
def test_markers_add_up_to_what_every_chain_of_passes_cut(original: str, passes: list[tuple[str, int]]) -> None:
    text = original
    for kind, limit in passes:
        text = tail_excerpt(text, limit) if kind == "tail" else excerpt(text, limit)
    assert original_length(text) == len(original)
    kept = re.sub(r"…\[\d+ characters cut\]…|\[\.\.\. \d+ characters of output cut \.\.\.\]\n", "", text)
    rest = iter(original)
    assert all(char in rest for char in kept), "kept characters are the original's, in order"


def test_a_second_pass_over_an_excerpt_keeps_its_count() -> None:
    original = "".join(f"row {n}\n" for n in range(10_000))
    once = tail_excerpt(original, 1500)
    assert tail_excerpt(once, 1500) == once
    count = int(MARKER.findall(once)[0])
    assert count == len(original) - 1500


@pytest.mark.parametrize("line", ["row\n", "a longer row of output\n", "no newline at all"])
@pytest.mark.parametrize("limit", [1000, 1001, 8192])
def test_a_journal_marker_cut_by_a_later_pass_is_counted_in(tmp_path: Path, line: str, limit: int) -> None:
    path = tmp_path / "out.log"
    path.write_text(line * 3000, encoding="utf-8")
    shown = bounded_view(path, 0, path.stat().st_size, limit).text
    assert original_length(shown) == len(line) * 3000
    assert original_length(tail_excerpt(shown, 700)) == len(line) * 3000
    excerpted = tail_excerpt(shown, 300)
    assert MARKER.findall(excerpted) == [str(len(line) * 3000 - 300)]
    assert "bytes omitted" not in excerpted
