"""The tool governance pipeline and the approval service, with real tools writing real files."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from protoagent.events import MemoryStore, SessionLog
from protoagent.models.types import ToolCall
from protoagent.tools.approvals import ApprovalAnswer, ApprovalRequest, ApprovalService, Grant, GrantError
from protoagent.tools.pipeline import GuardInput, ToolEnvironment, ToolPipeline
from protoagent.tools.registry import ToolRegistry

from .tools_for_tests import Echo, Explode, WriteNote


def make_pipeline(tmp_path: Path, approvals: ApprovalService, guards=()) -> ToolPipeline:
    log = SessionLog(MemoryStore(), "s_test")
    log.append(
        "session.created",
        {"preset": "t", "model": "scripted", "root": str(tmp_path), "approval_policy": approvals.policy},
    )
    registry = ToolRegistry([WriteNote(), Echo(), Explode()])
    return ToolPipeline(registry, approvals, log, ToolEnvironment(tmp_path), guards=guards)


def note(call_id: str = "c1", name: str = "notes.txt") -> ToolCall:
    return ToolCall(call_id, "write_note", {"name": name, "text": "hello"})


def types(pipeline: ToolPipeline) -> list[str]:
    return [e.type for e in pipeline.log.events]


class Recorder:
    def __init__(self, allow: bool = True) -> None:
        self.allow = allow
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer(self.allow, "test says so")


def test_allowed_write_runs_after_its_decision_event(tmp_path: Path) -> None:
    answerer = Recorder()
    pipeline = make_pipeline(tmp_path, ApprovalService("ask", answerer))
    result = asyncio.run(pipeline.run(note()))
    assert result.status == "ok"
    assert (tmp_path / "notes.txt").read_text() == "hello"
    assert types(pipeline)[1:] == ["tool.started", "approval.requested", "approval.decided", "tool.ended"]
    decided = pipeline.log.last("approval.decided")
    assert decided is not None and decided.payload["call_id"] == "c1" and decided.payload["decision"] == "allow"
    assert answerer.requests[0].preview == "+++ notes.txt\n+hello"


def test_guards_are_monotonic_a_later_guard_cannot_reopen_a_denial(tmp_path: Path) -> None:
    seen: list[str] = []

    def deny_notes(view: GuardInput) -> str | None:
        seen.append("deny")
        return "notes are frozen"

    def permissive(view: GuardInput) -> str | None:
        seen.append("pass")
        return None

    answerer = Recorder(allow=True)
    pipeline = make_pipeline(tmp_path, ApprovalService("auto", answerer), guards=[deny_notes, permissive])
    result = asyncio.run(pipeline.run(note()))
    assert seen == ["deny", "pass"]
    assert result.status == "denied"
    assert "notes are frozen" in result.output
    assert not (tmp_path / "notes.txt").exists()
    assert answerer.requests == []
    assert "approval.requested" not in types(pipeline)


def test_one_time_approval_is_consumed_by_its_one_execution() -> None:
    request = ApprovalRequest("c1", "write_note", "write", "+x", ("a.txt",))
    grant = Grant(request.fingerprint)
    grant.consume(request)
    with pytest.raises(GrantError, match="already used"):
        grant.consume(request)
    other = ApprovalRequest("c2", "write_note", "write", "+x", ("a.txt",))
    with pytest.raises(GrantError, match="does not match"):
        Grant(request.fingerprint).consume(other)


def test_each_call_needs_its_own_approval(tmp_path: Path) -> None:
    answerer = Recorder()
    pipeline = make_pipeline(tmp_path, ApprovalService("ask", answerer))
    asyncio.run(pipeline.run(note("c1")))
    asyncio.run(pipeline.run(note("c2")))
    assert [r.call_id for r in answerer.requests] == ["c1", "c2"]


def test_missing_answerer_denies_with_how_to_approve(tmp_path: Path) -> None:
    pipeline = make_pipeline(tmp_path, ApprovalService("ask", None))
    result = asyncio.run(pipeline.run(note()))
    assert result.status == "denied"
    assert "--approval auto-edit" in result.output
    assert not (tmp_path / "notes.txt").exists()


def test_failing_answerer_denies(tmp_path: Path) -> None:
    async def broken(request: ApprovalRequest) -> ApprovalAnswer:
        raise RuntimeError("terminal went away")

    pipeline = make_pipeline(tmp_path, ApprovalService("ask", broken))
    result = asyncio.run(pipeline.run(note()))
    assert result.status == "denied"
    assert "terminal went away" in result.output
    assert not (tmp_path / "notes.txt").exists()


def test_child_session_never_prompts(tmp_path: Path) -> None:
    answerer = Recorder(allow=True)
    child = ApprovalService("ask", answerer).for_child()
    assert child.policy == "never"
    pipeline = make_pipeline(tmp_path, child)
    result = asyncio.run(pipeline.run(note()))
    assert result.status == "denied"
    assert answerer.requests == []
    assert not (tmp_path / "notes.txt").exists()


def test_deny_policy_denies_every_effect_but_reads_still_run(tmp_path: Path) -> None:
    pipeline = make_pipeline(tmp_path, ApprovalService("deny"))
    assert asyncio.run(pipeline.run(note())).status == "denied"
    assert asyncio.run(pipeline.run(ToolCall("c2", "echo", {"text": "hi"}))).output == "hi"


def test_auto_edit_allows_writes_inside_allowed_paths_only(tmp_path: Path) -> None:
    service = ApprovalService("auto-edit", None, allowed_paths=lambda: ["docs"])
    inside = ApprovalRequest("c1", "write_note", "write", "+", ("docs/a.md",))
    outside = ApprovalRequest("c2", "write_note", "write", "+", ("src/a.py",))
    command = ApprovalRequest("c3", "shell", "execute", "ls", ())
    assert asyncio.run(service.decide(inside)).allow
    assert not asyncio.run(service.decide(outside)).allow
    assert not asyncio.run(service.decide(command)).allow


def test_invalid_tool_arguments_return_a_correctable_rejection(tmp_path: Path) -> None:
    pipeline = make_pipeline(tmp_path, ApprovalService("auto"))
    result = asyncio.run(pipeline.run(ToolCall("c1", "write_note", {"name": "NOTES.md"})))
    assert result.status == "rejected"
    assert result.data["kind"] == "invalid_arguments"
    fields = {e["field"] for e in result.data["errors"]}
    assert fields == {"name", "text"}
    assert "Nothing was changed" in result.output
    assert not list(tmp_path.iterdir())


def test_unknown_tool_is_rejected_without_guessing_an_alias(tmp_path: Path) -> None:
    pipeline = make_pipeline(tmp_path, ApprovalService("auto"))
    result = asyncio.run(pipeline.run(ToolCall("c1", "write-note", {"name": "a.txt", "text": "x"})))
    assert result.status == "rejected"
    assert result.data["kind"] == "unknown_tool"
    assert "write_note" in result.data["available_tools"]
    assert not (tmp_path / "a.txt").exists()


def test_failed_execution_is_an_error_result_not_success_text(tmp_path: Path) -> None:
    pipeline = make_pipeline(tmp_path, ApprovalService("auto"))
    result = asyncio.run(pipeline.run(ToolCall("c1", "explode", {"text": "x"})))
    assert result.status == "error"
    assert result.output.startswith("error:") and "disk on fire" in result.output
    ended = pipeline.log.last("tool.ended")
    assert ended is not None and ended.payload["status"] == "error"


def test_no_effect_executes_without_a_prior_decision_for_that_call(tmp_path: Path) -> None:
    pipeline = make_pipeline(tmp_path, ApprovalService("auto"))
    for i in range(3):
        asyncio.run(pipeline.run(note(f"c{i}", "abc.txt")))
    events = pipeline.log.events
    for ended in (e for e in events if e.type == "tool.ended" and e.payload["status"] == "ok"):
        call_id = ended.payload["call_id"]
        decisions = [e for e in events if e.type == "approval.decided" and e.payload["call_id"] == call_id]
        assert len(decisions) == 1
        assert decisions[0].seq < ended.seq and decisions[0].payload["decision"] == "allow"
