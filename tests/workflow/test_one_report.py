"""One receipt, one report: the receipt ``run_check`` returned is the one the evidence holds, and
the report rebuilt from a run's log renders exactly as the live run's report on every surface."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console

import protoagent
from protoagent import MemoryStore, RunOptions
from protoagent.checks.receipts import CheckReceipt
from protoagent.interfaces.acp.ending import RunWatch
from protoagent.interfaces.cli.render import render_report
from protoagent.workflow.evidence import Evidence, check_results
from protoagent.workflow.run_report import RunReport


def _rendered(report: RunReport) -> str:
    console = Console(record=True, width=120, color_system=None)
    render_report(console, report)
    return console.export_text()


def test_a_report_read_back_from_the_log_is_the_live_report_and_holds_the_checks_receipts(tmp_path: Path) -> None:
    from tests.web.support import date_repo, fix_script

    repo = date_repo(tmp_path)
    store = MemoryStore()
    script = fix_script(tmp_path / "turns.jsonl")
    options = RunOptions(repo=repo, model=f"scripted:{script}", store=store, approval="auto", surface="editing")
    live = asyncio.run(protoagent.run_task("fix the failing date parser test", options))
    events = store.load(live.session_id)
    recorded = RunReport.from_events(live.session_id, events)

    assert live.evidence.verified and [c.phase for c in live.evidence.checks] == ["baseline", "verify"]
    assert recorded.to_json() == live.to_json()
    assert _rendered(recorded) == _rendered(live)
    assert "check unittest [verify]: passed, 1 tests" in _rendered(live)
    assert RunWatch().final_message(recorded) == RunWatch().final_message(live)

    # The receipt the tool returned is the receipt each check result holds, read back once.
    ended = [e for e in events if e.type == "tool.ended" and e.payload["tool"] == "run_check"]
    receipts = [CheckReceipt.from_data(e.payload["data"]) for e in ended]
    assert [r.receipt for r in check_results(events)] == receipts
    assert [r.to_data() for r in receipts if r is not None] == [e.payload["data"] for e in ended]
    assert all(r is not None and r.dependency_revisions and r.argv for r in receipts)

    # evidence.reported is the evidence's own payload, and reads back to the same evidence.
    reported = next(e.payload for e in events if e.type == "evidence.reported")
    assert reported == live.evidence.to_payload()
    assert Evidence.from_payload(reported, ()).to_payload() == reported


def test_receipt_data_without_a_check_id_is_no_receipt_and_older_data_takes_defaults() -> None:
    assert CheckReceipt.from_data({}) is None and CheckReceipt.from_data({"check_id": 3}) is None
    older = CheckReceipt.from_data({"check_id": "unit", "outcome": "passed"})  # a log missing newer keys
    assert older is not None and (older.tests_run, older.failed_tests, older.changed_runner_files) == (None, (), ())
    assert "changed_runner_files" not in older.to_data()
