"""search_regex matches per line, as its schema says: anchors and boundaries hold at every line.

The whole-file prefilter once ran without MULTILINE, so ``^def intword`` found nothing unless
the definition opened the file; the model was told the function did not exist.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.workflow.support import call, run_workflow, say

from protoagent.testing import final_turn, make_repo, tool_turn, write_script
from protoagent.workspace.paths import open_root
from protoagent.workspace.search import compile_pattern, search_files

NUMBER_PY = '''"""Humanizing functions for numbers."""

import math


def intcomma(value):
    return f"{value:,}"


def intword(value, format="%.1f"):
    return format % (value / 1e6) + " million"
'''


def _matches(root: Path, pattern: str) -> list[tuple[str, int, str]]:
    with open_root(root) as fd:
        found = search_files(fd, compile_pattern(pattern), ".", None)
    return [(m.path, m.line, m.text) for m in found.matches]


def test_anchored_definition_search_finds_a_def_that_starts_a_later_line(tmp_path: Path) -> None:
    files = {"src/humanize/number.py": NUMBER_PY, "src/humanize/__init__.py": "from .number import intword\n"}
    turns = [
        call("search_regex", "architect", "search_def", pattern="^def intword", path="src"),
        call("search_regex", "architect", "search_end", pattern=r"million\"$", path="src"),
        say("intword is defined in src/humanize/number.py line 10.", "architect"),
    ]
    result = run_workflow(tmp_path, "where is intword defined?", turns, files=files, surface="question")
    shown = {m.tool_call_id: m.content for m in result.requests("architect")[-1].messages if m.tool_call_id is not None}
    assert shown["search_def"] == 'src/humanize/number.py:10: def intword(value, format="%.1f"):'
    assert shown["search_end"] == 'src/humanize/number.py:11:     return format % (value / 1e6) + " million"'


def test_the_cli_session_log_records_the_anchored_match(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/humanize/number.py": NUMBER_PY})
    script = write_script(
        tmp_path / "turns.jsonl",
        [
            tool_turn("search_regex", role="architect", pattern="^def intword", path="src"),
            final_turn("intword is defined in src/humanize/number.py line 10.", role="architect"),
        ],
    )
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home")}

    def cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "protoagent", *args], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    report = json.loads(cli("run", "--model", f"scripted:{script}", "--repo", str(repo), "--json", "where is intword?"))
    events = json.loads(cli("sessions", "show", report["session_id"], "--json"))["events"]
    ended = [e["payload"] for e in events if e["type"] == "tool.ended" and e["payload"]["tool"] == "search_regex"]
    assert [p["output"] for p in ended] == ['src/humanize/number.py:10: def intword(value, format="%.1f"):']


def test_anchors_hold_at_crlf_line_ends_and_in_files_without_a_final_newline(tmp_path: Path) -> None:
    (tmp_path / "win.py").write_bytes(b"x = 1\r\ndef run():\r\n    return 2\r\n")
    (tmp_path / "tail.py").write_text("a = 1\ndef last(): pass")
    assert _matches(tmp_path, r"^def \w+\(\):$") == [("win.py", 2, "def run():")]
    assert _matches(tmp_path, r"2$") == [("win.py", 3, "    return 2")]
    assert _matches(tmp_path, r"pass$") == [("tail.py", 2, "def last(): pass")]


def test_patterns_that_see_past_a_line_are_still_matched_per_line(tmp_path: Path) -> None:
    # Lookbehinds, \A and \Z see the neighbouring line in a whole-file search: no prefilter for them.
    (tmp_path / "m.py").write_text("import os\nfoo = 1\nbar = foo\n")
    assert _matches(tmp_path, r"(?<![^\s])foo") == [("m.py", 2, "foo = 1"), ("m.py", 3, "bar = foo")]
    assert _matches(tmp_path, r"\Afoo") == [("m.py", 2, "foo = 1")]
    assert _matches(tmp_path, r"foo\Z") == [("m.py", 3, "bar = foo")]
    assert _matches(tmp_path, r"1(?![\s\S])") == [("m.py", 2, "foo = 1")]


ATOMS = st.sampled_from(
    [
        "^",
        "$",
        r"\b",
        r"\B",
        r"\A",
        r"\Z",
        "a",
        "b",
        " ",
        ".",
        r"\w",
        r"\W",
        r"\s",
        r"\S",
        "[ab]",
        "[^a]",
        "[^\\n]",
        "(?<=a)",
        "(?<!b)",
        "(?=a)",
        "(?!b)",
        "(?s:.)",
        "(?-m:^)",
        "(?-m:$)",
    ]
)
QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "{2}", "*?", "*+", "++"])
PIECE = st.builds(lambda atom, q: atom + q if atom not in ("^", "$", r"\A", r"\Z") else atom, ATOMS, QUANTIFIERS)
PATTERNS = st.one_of(
    st.lists(PIECE, min_size=1, max_size=5).map("".join),
    st.tuples(st.lists(PIECE, min_size=1, max_size=3), st.lists(PIECE, min_size=1, max_size=3)).map(
        lambda pair: f"(?:{''.join(pair[0])}|{''.join(pair[1])})"
    ),
    st.lists(PIECE, min_size=1, max_size=3).map(lambda p: f"(?>{''.join(p)})b"),
)
TEXTS = st.text(alphabet="ab _\n\r", max_size=30)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pattern=PATTERNS, text=TEXTS)
def test_the_prefilter_never_rejects_a_file_with_a_matching_line(pattern: str, text: str) -> None:
    try:
        expected_matcher = regex.compile(pattern)
    except regex.error:
        return
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    expected = [(number, line) for number, line in enumerate(lines, 1) if expected_matcher.search(line)]
    with tempfile.TemporaryDirectory() as folder:
        with open(os.path.join(folder, "f.txt"), "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        found = _matches(Path(folder), pattern)
    assert [(line, text) for _, line, text in found] == expected
