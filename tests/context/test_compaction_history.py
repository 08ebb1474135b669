"""``context.compacted`` in the derived history: the summary stands in place of its range, the
incremental derivation agrees with the full one, and ``protoagent run --resume`` goes on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from tests.app.support import cli

from protoagent.context.compaction import Compactor, plan_compaction
from protoagent.context.tokens import EstimatingCounter
from protoagent.events import derive_messages
from protoagent.events.messages import SUMMARY_MARK, MessageDeriver
from protoagent.testing import make_repo, write_script

from .support import Conversation, big

COUNTER = EstimatingCounter()


def chat_of(turns: int) -> Conversation:
    chat = Conversation("architect")
    for n in range(1, turns + 1):
        chat.log.append("user.message", {"text": f"question {n}"}, turn=n, agent="architect")
        chat.batch(("read_file", big(f"r{n}", 800)))
        chat.log.append("model.completed", {"text": f"answer {n}"}, turn=n, agent="architect")
    return chat


def test_the_summary_replaces_exactly_its_range_and_later_turns_stay_whole() -> None:
    chat = chat_of(5)
    plan = plan_compaction(chat.events, "architect", COUNTER, keep_turns=2)
    assert plan is not None and [t.number for t in plan.turns] == [1, 2, 3]
    asyncio.run(Compactor(COUNTER, 20_000).compact(chat.log, "architect", keep_turns=2))
    history = derive_messages(chat.events, "architect")
    assert history[0].content.startswith(f"{SUMMARY_MARK} turns 1-3, 12 messages")
    assert [m.content for m in history[1:] if m.role == "user"] == ["question 4", "question 5"]
    called = [c.id for m in history for c in m.tool_calls]
    assert called == [m.tool_call_id for m in history if m.role == "tool"]  # no pair is split


def test_a_later_summary_stands_for_the_earlier_one_too() -> None:
    chat = chat_of(4)
    compactor = Compactor(COUNTER, 20_000)
    asyncio.run(compactor.compact(chat.log, "architect", keep_turns=2))
    chat.log.append("user.message", {"text": "question 5"}, turn=5, agent="architect")
    second = asyncio.run(compactor.compact(chat.log, "architect", keep_turns=1))
    assert second is not None and second.payload["turns"] == [1, 2, 3, 4]
    history = derive_messages(chat.events, "architect")
    assert [m.content.startswith(SUMMARY_MARK) for m in history] == [True, False]
    assert "question 1" in history[0].content and "question 4" in history[0].content


def test_the_incremental_derivation_equals_the_full_one_through_compactions() -> None:
    chat = chat_of(3)
    deriver = MessageDeriver("architect")
    asyncio.run(Compactor(COUNTER, 8192).compact(chat.log, "architect", keep_turns=1))
    for n in range(4, 7):
        chat.log.append("user.message", {"text": f"question {n}"}, turn=n, agent="architect")
        assert deriver.derive(chat.events) == derive_messages(chat.events, "architect")
        asyncio.run(Compactor(COUNTER, 8192).compact(chat.log, "architect", keep_turns=1))
        assert deriver.derive(chat.events) == derive_messages(chat.events, "architect")
    assert len(derive_messages(chat.events, "architect")) == 2


def test_another_agents_summary_leaves_this_agents_history_alone() -> None:
    chat = chat_of(3)
    before = derive_messages(chat.events, "architect")
    payload = {"first_seq": 1, "last_seq": 999, "summary": "coder's", "method": "deterministic"}
    chat.log.append("context.compacted", payload, agent="coder")
    assert derive_messages(chat.events, "architect") == before


def test_nothing_to_compact_is_no_event() -> None:
    chat = chat_of(1)
    assert asyncio.run(Compactor(COUNTER, 8192).compact(chat.log, "architect", keep_turns=1)) is None
    assert not [e for e in chat.events if e.type == "context.compacted"]


@pytest.mark.parametrize(
    "payload",
    [
        {"first_seq": 1, "last_seq": 2, "summary": "s", "method": "guessed"},
        {"first_seq": 1, "summary": "s", "method": "model"},
        {"first_seq": 1, "last_seq": 2, "method": "model"},
    ],
)
def test_a_malformed_compaction_is_refused_on_append(payload: dict[str, Any]) -> None:
    chat = Conversation("architect")
    with pytest.raises(ValueError, match=r"context\.compacted payload field"):
        chat.log.append("context.compacted", payload, agent="architect")


@pytest.mark.slow
def test_twelve_cli_resumes_of_8kb_on_a_20k_window_exit_0_and_say_what_was_compacted(tmp_path: Path) -> None:
    repo, home = make_repo(tmp_path / "repo", {"notes.py": "VALUE = 1\n"}), tmp_path / "home"
    session_id = ""
    shown = []
    for n in range(1, 13):
        text = (f"turn {n}: consider part {n}. " + f"point {n} needs care; " * 400)[:8000]
        turns = [{"context_window": 20_000}, {"role": "architect", "text": f"answer {n}"}]
        script = write_script(tmp_path / f"t{n}.jsonl", turns)
        resume = ["--resume", session_id] if session_id else []
        args = ["run", "--repo", str(repo), "--model", f"scripted:{script}", "--surface", "question", *resume, text]
        done = cli(home, *args, "--json") if not session_id else cli(home, *args)
        assert done.returncode == 0, (n, done.stderr[-500:], done.stdout[-500:])
        session_id = session_id or json.loads(done.stdout)["session_id"]
        shown.append(done.stdout)
    assert any("compacted turns 1-" in out and "summary (" in out for out in shown)
    events = json.loads(cli(home, "sessions", "show", session_id, "--json").stdout)["events"]
    compacted = [e for e in events if e["type"] == "context.compacted"]
    assert compacted and compacted[0]["payload"]["fallback"].startswith("the summary call failed")
    assert [e["payload"]["status"] for e in events if e["type"] == "turn.ended"] == ["completed"] * 12


def test_a_call_left_open_in_a_compacted_range_leaves_no_stray_result() -> None:
    chat = Conversation("architect")
    chat.log.append("user.message", {"text": "question 1"}, turn=1, agent="architect")
    calls = [{"id": "open_1", "name": "read_file", "arguments": {"path": "a.py"}}]
    chat.log.append("model.completed", {"text": "", "tool_calls": calls}, turn=1, agent="architect")  # crash here
    asyncio.run(Compactor(COUNTER, 8192).compact(chat.log, "architect", keep_turns=0, trigger="user"))
    chat.log.append("user.message", {"text": "question 2"}, turn=2, agent="architect")
    history = derive_messages(chat.events, "architect")
    assert [m.role for m in history] == ["user", "user"]
    assert MessageDeriver("architect").derive(chat.events) == history
