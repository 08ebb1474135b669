"""Sessions that go on: the oldest turns become a ``context.compacted`` summary at the model
boundary, through real resumed runs on a real SQLite log with the scripted model."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from protoagent.context.compaction import COMPACTION_AGENT, summary_budget
from protoagent.context.session_compaction import compact_session
from protoagent.context.tokens import EstimatingCounter, estimate_request
from protoagent.events import Event, SQLiteStore, derive_messages
from protoagent.events.messages import SUMMARY_MARK
from protoagent.models.profile import ProfileRequest
from protoagent.models.registry import ModelConfig
from protoagent.models.types import ModelRequest
from protoagent.testing import ScriptedModel, make_repo
from protoagent.workflow.run import RunOptions, RunReport, run_task

COUNTER = EstimatingCounter()
NOTES = "".join(f"NOTE_{n:03d} = {'n' * 60!r}\n" for n in range(120))
"""A file of about 9,000 characters: one read of it is a large observation."""


def turn_text(n: int, size: int = 8000) -> str:
    """About ``size`` characters of a person's message, different for every turn."""
    head = f"turn {n}: consider part {n} of the design. "
    body = "".join(f"point {n}.{i} needs care; " for i in range(size // 10))
    return (head + body)[:size]


@dataclass
class Session:
    """One session continued turn after turn, each turn a run of its own on the same SQLite log."""

    tmp: Path
    window: int
    profile: ProfileRequest = "standard"
    files: Mapping[str, str] = field(default_factory=lambda: {"notes.py": NOTES})
    session_id: str | None = None
    reports: list[RunReport] = field(default_factory=list)
    models: list[ScriptedModel] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.repo = make_repo(self.tmp / "repo", self.files)
        self.store = SQLiteStore(self.tmp / "sessions.db")

    def turn(self, text: str, turns: Sequence[Mapping[str, Any]], calls: int | None = None) -> RunReport:
        model = ScriptedModel.from_lines(turns)
        options = RunOptions(
            repo=self.repo,
            model="scripted:inline",
            store=self.store,
            approval="auto",
            provider=model,
            surface="question",
            profile=self.profile,
            skill_resolver=False,
            model_config=ModelConfig(context_window=self.window),
            artifacts_root=self.tmp / "artifacts",
            data_home=self.tmp / "home",
            resume=self.session_id,
            max_model_calls=calls,
        )
        report = asyncio.run(run_task(text, options))
        self.session_id = report.session_id
        self.reports.append(report)
        self.models.append(model)
        return report

    def events(self) -> list[Event]:
        assert self.session_id is not None
        return SQLiteStore(self.tmp / "sessions.db").load(self.session_id)

    def compactions(self) -> list[Event]:
        return [e for e in self.events() if e.type == "context.compacted"]

    def last_request(self) -> ModelRequest:
        return [r for r in self.models[-1].requests if r.agent_role == "architect"][-1]


def answer(text: str) -> dict[str, Any]:
    return {"role": "architect", "text": text}


def summary_turn(text: str) -> dict[str, Any]:
    return {"role": COMPACTION_AGENT, "text": text}


def fits(request: ModelRequest, window: int) -> bool:
    reserve = request.max_output_tokens or 1024
    return estimate_request(request, COUNTER, output_reserve=reserve).total <= window


def test_twelve_resumed_turns_of_8kb_on_a_20k_window_all_complete_with_the_newest_turn_and_the_task_record(
    tmp_path: Path,
) -> None:
    """Before compaction the ninth turn failed: mandatory context needs about 20553 tokens."""
    session = Session(tmp_path, window=20_000)
    for n in range(1, 13):
        session.turn(turn_text(n), [answer(f"answer {n}"), summary_turn(f"Asked: parts 1 to {n}. Decided: go on.")])
    assert [r.status for r in session.reports] == ["completed"] * 12
    last = session.last_request()
    texts = [m.content for m in last.messages]
    assert turn_text(12) in texts  # the newest turn, whole
    assert any(t.startswith("[task record]\nobjective: turn 1:") for t in texts)
    assert any(t.startswith(SUMMARY_MARK) for t in texts)
    assert fits(last, 20_000)
    compactions = session.compactions()
    assert compactions and all(e.payload["method"] == "model" for e in compactions)
    assert all(e.payload["summary_tokens"] <= summary_budget(20_000) for e in compactions)
    assert compactions[-1].payload["turns"][0] == 1  # a later summary stands for the earlier one too


def test_the_summary_request_is_bounded_and_says_what_to_keep(tmp_path: Path) -> None:
    session = Session(tmp_path, window=20_000)
    for n in range(1, 10):
        session.turn(turn_text(n), [answer(f"answer {n}"), summary_turn("Asked: the design. Decided: part 1 first.")])
    asked = [r for m in session.models for r in m.requests if r.agent_role == COMPACTION_AGENT]
    assert asked, "no summary was asked for"
    for request in asked:
        assert request.tools == () and request.max_output_tokens == summary_budget(20_000)
        assert fits(request, 20_000)
        assert "Decided" in request.system and "Open" in request.system
        assert "turn 1 asked: turn 1: consider part 1" in request.messages[0].content


def test_small_profile_at_8k_compacts_with_the_deterministic_digest_and_no_summary_call(tmp_path: Path) -> None:
    session = Session(tmp_path, window=8000, profile="small")
    for n in range(1, 13):
        session.turn(turn_text(n), [answer(f"answer {n}"), summary_turn("never used")])
    assert [r.status for r in session.reports] == ["completed"] * 12
    last = session.last_request()
    texts = [m.content for m in last.messages]
    assert turn_text(12) in texts and any(t.startswith("[task record]") for t in texts)
    assert fits(last, 8000)
    assert not [r for m in session.models for r in m.requests if r.agent_role == COMPACTION_AGENT]
    compactions = session.compactions()
    assert compactions and {e.payload["method"] for e in compactions} == {"deterministic"}
    assert "turn 1 asked: turn 1: consider part 1" in compactions[-1].payload["summary"]


def test_a_failing_summary_call_falls_back_to_the_digest_and_the_turn_completes(tmp_path: Path) -> None:
    session = Session(tmp_path, window=20_000)
    for n in range(1, 10):
        session.turn(turn_text(n), [answer(f"answer {n}")])  # no summary turn: the summary call fails
    assert [r.status for r in session.reports] == ["completed"] * 9
    (first, *_) = session.compactions()
    assert first.payload["method"] == "deterministic"
    assert first.payload["fallback"].startswith("the summary call failed: the model script is exhausted")


def test_a_reload_derives_exactly_the_history_the_model_was_shown(tmp_path: Path) -> None:
    session = Session(tmp_path, window=20_000)
    for n in range(1, 12):
        session.turn(turn_text(n), [answer(f"answer {n}")])
    events = session.events()
    requested = [e.seq for e in events if e.type == "model.requested" and e.agent == "architect"][-1]
    history = derive_messages([e for e in events if e.seq < requested], "architect")
    shown = [m for m in session.last_request().messages if not m.content.startswith("[task record")]
    assert shown == history
    assert history[0].content.startswith(SUMMARY_MARK)


def test_old_reads_stay_recoverable_through_their_call_ids(tmp_path: Path) -> None:
    session = Session(tmp_path, window=20_000)
    read = {"role": "architect", "tool_calls": [{"name": "read_file", "arguments": {"path": "notes.py"}, "id": "r1"}]}
    session.turn(turn_text(1), [read, answer("NOTE_000 is the first note.")])
    for n in range(2, 9):
        session.turn(turn_text(n), [answer(f"answer {n}")])
    summary = session.compactions()[0].payload["summary"]
    assert 'read_file(path="notes.py")' in summary and 'recall(call_id="r1")' in summary
    recall = {"role": "architect", "tool_calls": [{"name": "recall", "arguments": {"call_id": "r1"}, "id": "r2"}]}
    session.turn("show me the first note again", [recall, answer("NOTE_000 again.")])
    recalled = [e for e in session.events() if e.type == "tool.ended" and e.payload["call_id"] == "r2"]
    assert recalled[0].payload["status"] == "ok" and "NOTE_000" in recalled[0].payload["output"]


def test_a_newest_turn_that_alone_cannot_fit_still_fails_with_the_one_line_reason(tmp_path: Path) -> None:
    session = Session(tmp_path, window=20_000)
    session.turn(turn_text(1), [answer("answer 1")])
    report = session.turn(turn_text(2, size=90_000), [answer("never")])
    assert report.status == "failed"
    failed = [e for e in session.events() if e.type == "model.failed"]
    assert "mandatory context needs about" in failed[-1].payload["error"]


def test_activated_skill_pairs_stay_exact_through_compaction(tmp_path: Path) -> None:
    files = {"notes.py": NOTES, ".agents/skills/review/SKILL.md": REVIEW_SKILL}
    session = Session(tmp_path, window=20_000, files=files)
    session.turn(f"use $review on {turn_text(1)}", [answer("answer 1")])
    for n in range(2, 10):
        session.turn(turn_text(n), [answer(f"answer {n}")])
    assert session.compactions()
    skill_results = [m.content for m in session.last_request().messages if m.name == "skill"]
    activated = next(e for e in session.events() if e.type == "skill.activated")
    assert len(skill_results) == 1 and "Read the whole diff before judging." in skill_results[0]
    assert activated.payload["activation"]["name"] == "review"


REVIEW_SKILL = "---\nname: review\ndescription: Review a change.\n---\n# Review\nRead the whole diff before judging.\n"


def test_compact_session_summarizes_the_conversation_with_the_persons_focus(tmp_path: Path) -> None:
    session = Session(tmp_path, window=20_000)
    session.turn("which parser should we use? we decided on the ISO parser", [answer("The ISO parser: strict.")])
    session.turn("and the fallback?", [answer("No fallback: reject bad input.")])
    assert session.session_id is not None
    result = asyncio.run(compact_session(session.session_id, session.store, focus="parser decisions"))
    assert result.compacted and result.method == "deterministic" and result.turns == (1, 2)
    (event,) = session.compactions()
    assert (event.payload["trigger"], event.payload["focus"]) == ("user", "parser decisions")
    session.turn("what did we decide first?", [answer("The ISO parser.")])
    first, *_ = session.last_request().messages
    assert first.content.startswith(SUMMARY_MARK) and "The ISO parser: strict." in first.content
    again = asyncio.run(compact_session(session.session_id, session.store))
    assert again.compacted  # the new turn joins the summary


def test_compact_session_refuses_a_focus_too_long_and_reports_nothing_to_compact(tmp_path: Path) -> None:
    from protoagent.errors import ConfigError

    session = Session(tmp_path, window=20_000)
    session.turn("hello", [answer("hi")])
    assert session.session_id is not None
    with pytest.raises(ConfigError, match="keep it under 500"):
        asyncio.run(compact_session(session.session_id, session.store, focus="x" * 501))
    assert asyncio.run(compact_session(session.session_id, session.store)).compacted
    nothing = asyncio.run(compact_session(session.session_id, session.store))
    assert not nothing.compacted and nothing.reason.startswith("nothing to compact")


def test_a_model_written_summary_counts_in_the_run_s_tokens(tmp_path: Path) -> None:
    session = Session(tmp_path, window=20_000)
    usage = {"input_tokens": 1234, "output_tokens": 56}
    for n in range(1, 9):
        session.turn(turn_text(n), [answer(f"answer {n}"), {**summary_turn("Asked: parts."), "usage": usage}])
    (compacted, *_) = session.compactions()
    assert compacted.payload["usage"] == usage
    counted = [r.to_json()["tokens"] for r in session.reports]
    assert {"input": 1234, "output": 56, "cached_input": 0} in counted


def test_a_model_summary_is_one_of_the_run_s_model_calls_and_never_its_last(tmp_path: Path) -> None:
    session = Session(tmp_path, window=20_000)
    for n in range(1, 7):
        session.turn(turn_text(n), [answer(f"answer {n}")])
    tight = session.turn(turn_text(7), [answer("answer 7"), summary_turn("never used")], calls=1)
    assert tight.status == "completed"
    (first,) = session.compactions()
    assert first.payload["fallback"] == "the run has no model call to spare for a summary"
    assert not first.payload["model_call"]
    for n in range(8, 12):
        session.turn(turn_text(n), [answer(f"answer {n}"), summary_turn("Asked: parts.")], calls=2)
    assert [r.status for r in session.reports] == ["completed"] * 11
    made = [e.payload for e in session.compactions() if e.payload["method"] == "model"]
    assert made and all(p["model_call"] for p in made)


def test_a_skill_the_model_loaded_comes_back_exact_after_its_turn_was_compacted(tmp_path: Path) -> None:
    files = {"notes.py": NOTES, ".agents/skills/review/SKILL.md": REVIEW_SKILL}
    session = Session(tmp_path, window=20_000, files=files)
    load = {"role": "architect", "tool_calls": [{"name": "skill", "arguments": {"name": "review"}, "id": "s1"}]}
    session.turn(turn_text(1), [load, answer("answer 1")])
    for n in range(2, 10):
        session.turn(turn_text(n), [answer(f"answer {n}")])
    (compacted, *_) = session.compactions()
    assert compacted.payload["turns"][0] == 1  # the turn that loaded the skill is summarized
    results = [m for m in session.last_request().messages if m.tool_call_id == "s1"]
    assert len(results) == 1 and "Read the whole diff before judging." in results[0].content
