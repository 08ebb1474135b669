"""Deferral said later in a session ("don't run it, I'll do it" as a resumed session's next
message) is honoured at once, and ranks below denied or stale results as the spec orders them."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from protoagent.events import MemoryStore
from protoagent.testing import ScriptedModel, make_repo
from protoagent.tools.approvals import Policy
from protoagent.workflow.run import RunOptions, run_task

from .support import DATE_REPO, FIXED_LINE, Run, call, fix_turns, say

OBJECTIVE = "fix the failing date parser test"
DEFER = "don't run it, I'll do it"


class Session:
    """One repository and one store: a first run, then messages that resume its session."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.root = make_repo(tmp_path / "repo", DATE_REPO)
        self.store = MemoryStore()
        self.session_id: str | None = None

    def send(self, text: str, turns: Sequence[Mapping[str, Any]], approval: Policy = "auto") -> Run:
        model = ScriptedModel.from_lines(turns)
        options = RunOptions(
            repo=self.root,
            model="scripted:inline",
            store=self.store,
            approval=approval,
            provider=model,
            artifacts_root=self.tmp_path / "artifacts",
            data_home=self.tmp_path / "home",
            resume=self.session_id,
        )
        report = asyncio.run(run_task(text, options))
        self.session_id = report.session_id
        return Run(report, self.store.load(report.session_id), model, self.root)


def _edits_then_the_model_gives_out() -> list[dict[str, Any]]:
    """Coder applies the fix; the script ends before the Architect's summary, so no final check runs."""
    return [call("coder", "architect", task="fix the swapped return in dates.py"), *fix_turns()]


def test_dont_run_it_in_a_resumed_sessions_next_message_defers_verification_at_once(tmp_path: Path) -> None:
    session = Session(tmp_path)
    first = session.send(OBJECTIVE, _edits_then_the_model_gives_out())
    assert first.json["applied"] is True and not [c for c in first.json["checks"] if c["phase"] == "verify"]
    later = session.send(DEFER, [])
    assert later.model.requests == [], "no classification call and no model turn"
    contract = later.of("run.contract")[-1].payload
    assert contract["surface"] == "editing" and contract["defer_verification"] is True
    this_run = [e for e in later.events if e.seq > later.of("run.contract")[-1].seq]
    assert not [e for e in this_run if e.type in ("tool.started", "model.requested")], "nothing ran"
    assert [e.payload["phase"] for e in this_run if e.type == "workflow.phase"] == ["verification_deferred"]
    report = later.json
    assert report["verification"] == "deferred" and report["notes"][0].startswith("verification deferred")
    assert report["applied"] is True and report["verified"] is False and report["criteria_supported"] is False
    assert [(c["phase"], c["outcome"]) for c in report["checks"]] == [("baseline", "failed")]
    assert FIXED_LINE in (session.root / "dates.py").read_text()


def test_a_later_deferral_ranks_below_a_denied_final_check(tmp_path: Path) -> None:
    session = Session(tmp_path)
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    first = session.send(OBJECTIVE, turns, approval="auto-edit")
    assert [(c["phase"], c["outcome"]) for c in first.json["checks"]] == [("baseline", "denied"), ("verify", "denied")]
    later = session.send(DEFER, [])
    assert later.model.requests == []
    assert later.json["verification"] == "denied" and later.json["verified"] is False


def test_a_later_deferral_ranks_below_stale_results(tmp_path: Path) -> None:
    session = Session(tmp_path)
    turns = [call("coder", "architect", task="fix dates.py"), *fix_turns(), say("fixed", "architect")]
    first = session.send(OBJECTIVE, turns)
    assert first.json["verification"] == "verified"
    with (session.root / "dates.py").open("a") as source:
        source.write("\n# edited after the check\n")
    later = session.send(DEFER, [])
    assert later.model.requests == []
    assert later.json["verification"] == "stale" and later.json["verified"] is False


def test_a_later_message_that_also_asks_for_a_change_is_new_work_not_a_handoff(tmp_path: Path) -> None:
    session = Session(tmp_path)
    session.send(OBJECTIVE, _edits_then_the_model_gives_out())
    later = session.send("add a docstring to parse_date, don't run the tests, I'll do it", [say("ok", "architect")])
    assert [r.agent_role for r in later.model.requests] == ["architect"]
    assert later.json["verification"] == "deferred"
