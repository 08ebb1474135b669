"""A long ``protoagent chat`` under a real pseudo-terminal: fifty turns with reads, edits and
checks on a 20k window, ``/compact``, then a question about the first turn's decision that only
the summary can answer. The scripted model reports the window (a ``context_window`` line)."""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from protoagent.events import Event, derive_messages
from protoagent.events.messages import SUMMARY_MARK, MessageDeriver
from protoagent.testing import final_turn, make_repo, tool_turn, write_script
from protoagent.workflow.evidence import check_results

PROMPT = "you› "
WINDOW = 20_000
DECISION = "Decision D1: strict ISO dates, no fallback."
BUGGY = "def parse_date(text):\n    year, month, day = text.split('-')\n    return int(year), int(day), int(month)\n"
FIXED = BUGGY.replace("int(day), int(month)", "int(month), int(day)")
DOCUMENTED = '"""Strict ISO dates (D1)."""\n' + FIXED
TESTS = (
    "import unittest\nfrom dates import parse_date\n\n\nclass T(unittest.TestCase):\n"
    "    def test_iso(self):\n        self.assertEqual(parse_date('2024-03-15'), (2024, 3, 15))\n"
)
EDIT_TURNS = {12, 31}
CHECK_TURNS = {20, 40}


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def padding(n: int, size: int = 2000) -> str:
    return "".join(f"Background {n}.{i}: the team went over item {n}.{i} again; " for i in range(size // 50))[:size]


def message(n: int) -> str:
    """What the person types at turn ``n`` (about 2 kB, so the conversation outgrows the window)."""
    if n == 1:
        return f"{DECISION} Please keep that in mind for everything that follows. {padding(n)} Noted?"
    if n in EDIT_TURNS:
        return "fix the date bug in dates.py" if n == 12 else "add a module docstring to dates.py"
    if n in CHECK_TURNS:
        return "run the tests"
    return f"what does dates.py hold for part {n}? {padding(n)} What is your view?"


def turns_for(n: int) -> list[dict[str, Any]]:
    """The scripted model's turns for chat turn ``n`` (no summary turn: compaction uses the digest)."""
    if n == 12:
        edit = {"path": "dates.py", "old": BUGGY, "new": FIXED, "expected_revision": sha(BUGGY)}
        return edit_turns(edit, "swapped month and day back")
    if n == 31:
        edit = {"path": "dates.py", "old": FIXED, "new": DOCUMENTED, "expected_revision": sha(FIXED)}
        return edit_turns(edit, "documented D1")
    if n in CHECK_TURNS:
        return []  # the Verifier runs the checks without a model
    read = {
        "role": "architect",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "dates.py"}, "id": f"r{n}"}],
    }
    reads = [read] if n % 3 == 0 else []
    return [*reads, final_turn(f"Noted for part {n}." if n > 1 else "Noted: D1 holds.", role="architect")]


def edit_turns(edit: dict[str, str], summary: str) -> list[dict[str, Any]]:
    return [
        tool_turn("coder", role="architect", task="apply the change to dates.py"),
        tool_turn("edit_file", role="coder", **edit),
        tool_turn("report_task", role="coder", status="done", summary=summary),
        final_turn("done", role="coder"),
        final_turn("Changed dates.py.", role="architect"),
        final_turn("Reviewed: the diff does what was asked.", role="architect"),
    ]


def script(path: Path, turns: list[dict[str, Any]]) -> Path:
    return write_script(path, [{"context_window": WINDOW}, *turns])


@pytest.fixture
def chat(tmp_path: Path) -> Iterator[pexpect.spawn]:
    repo = make_repo(tmp_path / "repo", {"dates.py": BUGGY, "test_dates.py": TESTS})
    path = script(tmp_path / "turns.jsonl", [])
    env = {**os.environ, "PROTOAGENT_HOME": str(tmp_path / "home"), "NO_COLOR": "1", "TERM": "dumb"}
    args = ["-m", "protoagent", "chat", "--repo", str(repo), "--model", f"scripted:{path}", "--approval", "auto"]
    child = pexpect.spawn(sys.executable, args, env=env, encoding="utf-8", timeout=90, dimensions=(50, 200))
    child.expect_exact(PROMPT)
    yield child
    if child.isalive():
        child.terminate(force=True)


def say(child: pexpect.spawn, path: Path, text: str, turns: list[dict[str, Any]]) -> str:
    """Write the script for this turn, send the line, and return the session id the run reports.
    An edit ends ``incomplete`` when its criterion (the session's first objective, a decision)
    has no check that could support it; every other turn completes."""
    script(path, turns)
    child.sendline(text)
    child.expect(r"── (\w+) · session (s_[0-9a-f]+)")
    status, session_id = child.match.group(1), child.match.group(2)
    expected = ("completed", "incomplete") if text.startswith(("fix ", "add ")) else ("completed",)
    assert status in expected, f"turn {text[:40]!r} ended {status}: {child.before[-3000:]}"
    child.expect_exact(PROMPT)
    return str(session_id)


def load(tmp_path: Path, session_id: str) -> list[Event]:
    from protoagent.api import open_store

    with open_store(tmp_path / "home") as store:
        return store.load(session_id)


@pytest.mark.slow
def test_fifty_turns_with_reads_edits_and_checks_then_the_first_decision_is_answered_from_the_summary(
    tmp_path: Path, chat: pexpect.spawn
) -> None:
    path = tmp_path / "turns.jsonl"
    ids = {say(chat, path, message(n), turns_for(n)) for n in range(1, 51)}
    assert len(ids) == 1
    (session_id,) = ids
    automatic = [e for e in load(tmp_path, session_id) if e.type == "context.compacted"]
    assert automatic, "fifty turns of 2 kB on a 20k window must have compacted"
    script(path, [])
    chat.sendline("/compact keep the decisions")
    chat.expect(r"compacted turns 1-\d+ into a deterministic summary \(\d+ → \d+ tokens\)")
    chat.expect_exact(PROMPT)
    say(chat, path, "what did we decide in the first turn?", [final_turn("D1: strict ISO dates.", role="architect")])
    chat.sendeof()
    chat.expect(pexpect.EOF)

    events = load(tmp_path, session_id)
    assert (tmp_path / "repo" / "dates.py").read_text() == DOCUMENTED
    outcomes = [r.outcome for r in check_results(events)]
    assert len(outcomes) >= 4 and outcomes[-2:] == ["passed", "passed"], outcomes
    asked = [e.seq for e in events if e.type == "model.requested" and e.agent == "architect"][-1]
    history = derive_messages([e for e in events if e.seq < asked], "architect")
    assert history[0].content.startswith(SUMMARY_MARK) and DECISION in history[0].content
    assert not any(m.content.startswith(DECISION) for m in history)  # turn 1 itself is gone
    assert history[-1].content == "what did we decide in the first turn?"
    assert load(tmp_path, session_id) == events  # the log reloads identically
    step_by_step = MessageDeriver("architect")
    for end in range(1, len(events) + 1):
        step_by_step.derive(events[:end])
    assert step_by_step.derive(events) == derive_messages(events, "architect")
