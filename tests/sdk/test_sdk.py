"""The Python SDK: its docstring examples run, events stream live, approvals come from callbacks."""

from __future__ import annotations

import asyncio
import doctest
from pathlib import Path

import pytest

import protoagent
import protoagent.api
from protoagent import ApprovalAnswer, ApprovalRequest, MemoryStore, RunOptions, approval_callback, read_report
from protoagent.errors import ConfigError, SessionLoadError
from protoagent.testing import ScriptedModel, make_repo

from .test_approval_choices import pipeline_for


def test_sdk_docstring_examples_run() -> None:
    for module in (protoagent, protoagent.api):
        result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert result.failed == 0, module.__name__
        assert result.attempted >= 8, module.__name__


def test_public_api_is_listed_and_importable() -> None:
    assert protoagent.__all__ == sorted(protoagent.__all__)
    for name in protoagent.__all__:
        assert getattr(protoagent, name) is not None, name
    for name in ("run_task", "RunOptions", "stream_run", "approval_callback", "read_report", "ApprovalAnswer"):
        assert name in protoagent.__all__


def test_the_sdk_has_one_module_one_run_function_and_one_report() -> None:
    from protoagent.workflow.run import RunReport, run_task

    assert protoagent.run_task is run_task and protoagent.RunReport is RunReport
    assert not {"run_agent", "RunResult"} & set(protoagent.__all__)
    for name in ("stream_run", "run_sync", "read_report", "open_store", "compact_session", "rewind_session"):
        assert getattr(protoagent, name) is getattr(protoagent.api, name), name
    with pytest.raises(ModuleNotFoundError):
        __import__("protoagent.sdk")


def test_stream_yields_events_while_the_run_waits_for_approval(tmp_path: Path) -> None:
    """An event arrives before the run ends: the approval request is seen while it is pending."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"}, git=False)
    seen_while_pending: list[str] = []
    decided = asyncio.Event()

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        await decided.wait()
        return ApprovalAnswer.deny("not today")

    async def main() -> str:
        options = RunOptions(repo=repo, model="none", store=MemoryStore(), answerer=approval_callback(approve))
        run = protoagent.stream_run("!touch b.txt", options)
        async for event in run:
            if event.type == "approval.requested":
                seen_while_pending.append(event.payload["tool"])
                decided.set()
        return (await run.report()).status

    assert asyncio.run(main()) == "incomplete"
    assert seen_while_pending == ["shell"]
    assert not (repo / "b.txt").exists()


def test_callback_may_return_a_plain_yes_or_no(tmp_path: Path) -> None:
    from protoagent.tools.approvals import ApprovalService

    (tmp_path / "a.txt").write_text("old\n")
    answers = iter([False])
    pipeline = pipeline_for(tmp_path, ApprovalService("ask", approval_callback(lambda request: next(answers))))
    decision = asyncio.run(pipeline.approvals.decide(ApprovalRequest("c1", "replace_file", "write", "+x", ("a.txt",))))
    assert not decision.allow and decision.reason == "denied by the SDK callback"


def test_read_report_refuses_a_run_that_has_not_ended(tmp_path: Path) -> None:
    from protoagent.events import SessionLog

    store = MemoryStore()
    log = SessionLog(store, "s_open")
    log.append("session.created", {"preset": "t", "model": "m", "root": str(tmp_path), "approval_policy": "ask"})
    with pytest.raises(SessionLoadError, match="has not ended"):
        read_report("s_open", store)


def test_read_report_matches_the_run_report(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"notes.md": "x\n"}, git=False)
    model = ScriptedModel.from_lines([{"role": "architect", "text": "done"}])
    store = MemoryStore()
    options = RunOptions(repo=repo, model="scripted:inline", store=store, provider=model, surface="question")
    report = asyncio.run(protoagent.run_task("what is in notes.md?", options)).to_json()
    rebuilt = read_report(report["session_id"], store)
    assert rebuilt == report


def test_stream_run_outside_an_event_loop_says_how_to_call_it(tmp_path: Path) -> None:
    options = RunOptions(repo=tmp_path, model="none", store=MemoryStore())
    with pytest.raises(ConfigError, match="inside an async function"):
        protoagent.stream_run("!true", options)


def test_read_report_matches_an_editing_runs_report_with_checks(tmp_path: Path) -> None:
    from tests.web.support import date_repo, fix_script

    repo = date_repo(tmp_path)
    store = MemoryStore()
    script = fix_script(tmp_path / "turns.jsonl")
    options = RunOptions(repo=repo, model=f"scripted:{script}", store=store, approval="auto", surface="editing")
    report = asyncio.run(protoagent.run_task("fix the failing date parser test", options)).to_json()
    assert [c["phase"] for c in report["checks"]] == ["baseline", "verify"]
    assert read_report(report["session_id"], store) == report


def test_run_sync_inside_a_running_event_loop_is_a_clear_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"}, git=False)
    options = RunOptions(repo=repo, model="none", store=MemoryStore())

    async def inside() -> str:
        with pytest.raises(ConfigError) as raised:
            protoagent.run_sync("!true", options)
        return str(raised.value)

    assert "await run_task" in asyncio.run(inside())
